"""`python -m cragraph_lab bench verifier-eval`: the verifier against today's embedded evaluator head as a CRAG grader,
on passages neither was trained on.

For each held-out question: its gold passage (single-hop sets: the one holding the answer; hotpotqa_migres200:
each supporting passage, as CRAG calls a passage relevant) and its four TF-IDF nearest passages of the same
corpus. Each grader scores every passage for the question: the head's score in [-1, 1], the verifier's
probability that the passage speaks to the question (stated or contradicted, its best window). Reported per set:
ROC-AUC over all (question, passage) pairs, and how often the gold passage is graded first (P@1). On the
single-hop sets also: whether the verifier tells a right answer from a wrong one in the gold passage (the gold
answer marked against the reader's best spans there that are no gold answer: ROC-AUC of its STATED probability).

Sets: the XQuAD test half (en, ru, zh, and zh in traditional characters made with OpenCC), hotpotqa_migres200
(the development set: neither grader trained on it) and, for NQ, nothing (the head trained on its first
questions).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from cragraph_lab.evaluator_training import roc_auc
from cragraph_lab.reader_examples import Distractors
from cragraph_lab.training_data import default_data_root, read_jsonl, xquad_part
from rag.reader.types import Passage
from stores.chinese_script import traditional

DISTRACTORS = 4


def _sets(data_root: Path, limit: int) -> list[tuple[str, str, list[dict], dict[str, dict], bool]]:
    """(name, language, questions, corpus, relevance-labelled) of every held-out set."""
    found = []
    for language in ("en", "ru", "zh"):
        folder = data_root / "xquad_ru_zh_en" / language
        corpus = {r["id"]: r for r in read_jsonl(folder / "corpus.jsonl")}
        rows = [r for r in read_jsonl(folder / "questions.jsonl") if xquad_part(r["supporting_ids"][0]) == "test"]
        rows = rows[::max(1, len(rows) // limit)][:limit]
        found.append((f"xquad_test_{language}", language, rows, corpus, False))
        if language == "zh":
            hant = {k: {**v, "title": traditional(v.get("title") or ""), "text": traditional(v["text"])}
                    for k, v in corpus.items()}
            rows_hant = [{**r, "question": traditional(r["question"]),
                          "answers": [traditional(a) for a in r["answers"]]} for r in rows]
            found.append(("xquad_test_zh_traditional", "zh", rows_hant, hant, False))
    folder = data_root / "hotpotqa_migres200"
    corpus = {r["id"]: r for r in read_jsonl(folder / "corpus.jsonl")}
    found.append(("hotpotqa_migres200 (dev)", "en", read_jsonl(folder / "questions.jsonl")[:limit], corpus, True))
    return found


def compare_graders(data_root: Path | None = None, limit: int = 200, out: Path | None = None) -> str:
    """Score the held-out sets with both graders; a Markdown table (and JSON at `out`)."""
    from cragraph_lab.verifier import load_verifier
    from cragraph_lab.verifier_training import Builder
    from evaluators.registry import load_evaluator
    from rag.reader.cache import load_reader

    verifier = load_verifier(load_reader(backend="torch"))
    wrong_spans = Builder(verifier, 0).spans
    head = load_evaluator("embedded")
    report: dict[str, Any] = {}
    for name, language, rows, corpus, relevance in _sets(data_root or default_data_root(), limit):
        near = Distractors(corpus)
        labels: list[int] = []
        scores: dict[str, list[float]] = {"head": [], "verifier": []}
        first = {"head": 0, "verifier": 0}
        asked = 0
        seconds = {"head": 0.0, "verifier": 0.0}
        answer_labels: list[int] = []
        answer_scores: list[float] = []
        for row in tqdm(rows, desc=f"graders {name}", unit="q"):
            gold = [g for g in row["supporting_ids"] if g in corpus]
            if not relevance:
                gold = [g for g in gold if any(a.lower() in corpus[g]["text"].lower() for a in row["answers"])]
            if not gold:
                continue
            ids = [*gold, *near.nearest(row["question"], DISTRACTORS, set(row["supporting_ids"]))]
            truth = [int(i in gold) for i in ids]
            texts = [f"{corpus[i].get('title') or ''}. {corpus[i]['text']}" for i in ids]
            start = time.perf_counter()
            by_head = head.score(row["question"], texts)
            seconds["head"] += time.perf_counter() - start
            start = time.perf_counter()
            verdicts = verifier.verify(row["question"],
                                       [Passage(corpus[i]["text"], corpus[i].get("title") or "") for i in ids],
                                       language)
            seconds["verifier"] += time.perf_counter() - start
            by_verifier = [v.says for v in verdicts]
            labels += truth
            scores["head"] += by_head
            scores["verifier"] += by_verifier
            asked += 1
            for grader, own in (("head", by_head), ("verifier", by_verifier)):
                first[grader] += int(truth[int(np.argmax(own))] == 1)
            if not relevance:
                page = Passage(corpus[gold[0]]["text"], corpus[gold[0]].get("title") or "")
                right = next(a for a in row["answers"] if a.lower() in page.text.lower())
                wrong = wrong_spans(row["question"], page.text, row["answers"], language, 2)
                said = verifier.verify_each([(row["question"], a, page) for a in (right, *wrong)], language)
                answer_labels += [1] + [0] * len(wrong)
                answer_scores += [v.stated for v in said]
        report[name] = {"questions": asked, "pairs": len(labels),
                        **{f"auc_{g}": roc_auc(np.array(labels), np.array(scores[g])) for g in scores},
                        **{f"p1_{g}": first[g] / max(asked, 1) for g in first},
                        **{f"ms_{g}": 1000 * seconds[g] / max(asked, 1) for g in seconds},
                        "answers": len(answer_labels),
                        "auc_right_answer": roc_auc(np.array(answer_labels), np.array(answer_scores))
                        if 0 < sum(answer_labels) < len(answer_labels) else None}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    lines = ["| set | questions | ROC-AUC head | ROC-AUC verifier | P@1 head | P@1 verifier | ms/q head "
             "| ms/q verifier | right vs wrong answer: pairs | ROC-AUC |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in report.items():
        told = "" if r["auc_right_answer"] is None else f"{r['auc_right_answer']:.3f}"
        lines.append(f"| {name} | {r['questions']} | {r['auc_head']:.3f} | {r['auc_verifier']:.3f} | "
                     f"{r['p1_head']:.3f} | {r['p1_verifier']:.3f} | {r['ms_head']:.0f} | {r['ms_verifier']:.0f} | "
                     f"{r['answers'] or ''} | {told} |")
    return "\n".join(lines)
