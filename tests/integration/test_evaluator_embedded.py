"""The shipped embedded evaluator: its weights load through the registry and, with the real e5-small, score a
question's gold passage above distractors (English multi-hop, and the held-out XQuAD part in en / ru / zh)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cragraph_lab.training_data import xquad_part
from evaluators.embedded import DEFAULT_WEIGHTS, EmbeddedEvaluator
from evaluators.features import FEATURE_NAMES
from evaluators.registry import clear_evaluator_cache, load_evaluator

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def data_dir(name: str) -> Path:
    folder = DATA / name
    if not folder.exists():
        pytest.skip(f"benchmark data {folder} is not present (it sits beside the repo in development)")
    return folder


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def evaluator() -> EmbeddedEvaluator:
    clear_evaluator_cache()
    loaded = load_evaluator("embedded")
    assert isinstance(loaded, EmbeddedEvaluator)
    return loaded


def test_shipped_weights_are_small_and_match_the_feature_code():
    assert DEFAULT_WEIGHTS.is_file(), "the trained head must ship in evaluators/weights/"
    assert DEFAULT_WEIGHTS.stat().st_size < 25 * 1024 * 1024
    assert EmbeddedEvaluator(DEFAULT_WEIGHTS).head.feature_names == FEATURE_NAMES


def passage(row: dict) -> str:
    return f"{row['title']}. {row['text']}"


def test_gold_passage_scores_above_distractors_on_hotpotqa(evaluator):
    folder = data_dir("hotpotqa_migres200")
    corpus = {row["id"]: row for row in read(folder / "corpus.jsonl")}
    question = read(folder / "questions.jsonl")[0]
    gold = [corpus[i] for i in question["supporting_ids"]]
    distractors = [corpus[i] for i in list(corpus)[:40] if i not in question["supporting_ids"]][:4]
    scores = evaluator.score(question["question"], [passage(r) for r in gold + distractors])
    assert all(-1 <= s <= 1 for s in scores)
    assert max(scores[: len(gold)]) > max(scores[len(gold):])


@pytest.mark.parametrize("language", ["en", "ru", "zh"])
def test_gold_passage_scores_above_a_distractor_on_held_out_xquad(evaluator, language):
    folder = data_dir(f"xquad_ru_zh_en/{language}")
    corpus = [row for row in read(folder / "corpus.jsonl") if xquad_part(row["id"]) == "test"]
    by_id = {row["id"]: row for row in corpus}
    questions = [q for q in read(folder / "questions.jsonl") if q["supporting_ids"][0] in by_id][:3]
    wins = 0
    for question in questions:
        gold = by_id[question["supporting_ids"][0]]
        other = next(r for r in corpus if r["title"] != gold["title"])
        gold_score, other_score = evaluator.score(question["question"], [passage(gold), passage(other)])
        wins += gold_score > other_score
    assert wins == len(questions)


def test_a_passage_scored_alone_is_judged_beside_the_background_not_as_a_list_of_one(evaluator):
    """The head's features are list-relative: a list of one had nothing to stand out from and read as irrelevant
    (this answer scored -0.98 alone, 0.66 beside one other passage)."""
    question = "What award has Hedda Marsk won?"
    answer = ("Halvmere Open 2019. Golden Lyre Award-winning singer Hedda Marsk sang the national anthem before the "
              "final, with a sign-language interpreter beside her.")
    left_out = "Halvmere Open 2019. The final was played on 14 July 2019 at the Harbour Arena in Halvmere, Vestral."
    assert evaluator.head.scores(evaluator.features(question, [answer]))[0] < -0.5  # the list of one, unaided
    assert evaluator.score(question, [answer])[0] > 0.5
    assert evaluator.score(question, [left_out])[0] < -0.5
    with_reference = evaluator.score(question, [answer, left_out])
    assert with_reference[0] > 0.2 > with_reference[1]


def test_a_traditional_question_grades_simplified_passages_word_for_word(evaluator):
    """The word-level features read Chinese folded to simplified: without it this gold passage, which shares
    hardly a character pair with the traditional question, was graded under the default `upper` (0.5) that the
    simplified question clears by far."""
    from stores.chinese_script import traditional

    question = "谁在半决赛中输给了白鸽队？"
    gold = "白鸽队在半决赛中以 3–1 击败了北岭钢铁队，在比赛的最后十分钟打进了两个球。"
    other = "布伦霍尔特是维斯特拉尔的第二大城市，位于奥斯特尔河畔，距海岸约 60 公里。"
    assert evaluator.score(question, [gold, other])[0] > 0.5
    written = evaluator.score(traditional(question), [gold, other])
    assert written[0] > 0.5 > written[1]
