"""refine (knowledge strips) and select (coverage-aware greedy selection)."""

from __future__ import annotations

import numpy as np
import pytest

from rag.knowledge.selection import coverage, greedy_coverage
from rag.knowledge.strips import StripSettings, refine_passages, strip_spans
from tests.fixtures.graph import KeywordEvaluator

TEXT = (
    "The Volga is the longest river in Europe. Tower Bridge is in London. Kazan is a city. "
    "The Volga flows into the Caspian Sea."
)


def test_strips_are_exact_sentence_slices_and_short_ones_are_joined():
    spans = strip_spans(TEXT, "en", min_chars=30, max_chars=200)
    strips = [TEXT[s:e] for s, e in spans]
    assert strips == [
        "The Volga is the longest river in Europe.",
        "Tower Bridge is in London. Kazan is a city.",
        "The Volga flows into the Caspian Sea.",
    ]
    chinese = "蔡元培出生在绍兴。他是教育家。中央研究院在南京成立。"
    assert len(strip_spans(chinese, "zh", min_chars=12, max_chars=400)) == 3  # limits scaled for Chinese


def test_refine_keeps_every_strip_scored_and_recomposes_in_order():
    passage = {"id": "v#0", "title": "Volga", "text": TEXT, "language": "en", "grade": 0.6}
    knowledge, stats = refine_passages(
        "Which river flows into the Caspian Sea?", [passage], KeywordEvaluator(), StripSettings(min_chars=30),
    )
    (refined,) = knowledge
    assert stats["strips"] == stats["strips_kept"] == 3 and refined["original_chars"] == len(TEXT)
    assert refined["text"].startswith("The Volga is the longest") and refined["text"].endswith("Caspian Sea.")
    assert [s["start"] for s in refined["strips"]] == sorted(s["start"] for s in refined["strips"])
    best = max(refined["strips"], key=lambda s: s["score"])
    assert best["text"] == "The Volga flows into the Caspian Sea."  # the evidence ranks by these scores


def test_a_tables_rows_stay_on_their_lines_when_recomposed():
    text = ("The plants:\n\n| Plant | Opened |\n|---|---|\n| Tarn Creamery | 2011 |\n| Wick Mill | 2013 |\n\n"
            "Both are open.\nThey run all year.")
    passage = {"id": "p#0", "title": "Plants", "text": text, "language": "en", "grade": 0.6}
    (refined,), _ = refine_passages("When did Wick Mill open?", [passage], KeywordEvaluator(),
                                    StripSettings(min_chars=1))
    assert "The plants:\n| Plant | Opened |\n|---|---|\n| Tarn Creamery | 2011 |\n| Wick Mill | 2013 |\nBoth" \
        in refined["text"]
    assert refined["text"].endswith("Both are open. They run all year.")  # prose is joined by spaces as before


class _ListSpy(KeywordEvaluator):
    """Records each list it scores."""

    def __init__(self) -> None:
        self.lists: list[list[str]] = []

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        self.lists.append(list(passages))
        return super()._score_batch(question, passages)


def test_left_out_passages_are_scored_with_the_kept_strips_and_never_kept():
    kept = {"id": "v", "title": "Volga", "text": "The Volga flows into the Caspian Sea.", "language": "en",
            "grade": 0.8}
    left_out = {"id": "t", "title": "Thames", "text": "The Thames flows through London.", "language": "en",
                "grade": -0.9}
    spy = _ListSpy()
    knowledge, stats = refine_passages("Which river flows into the Caspian Sea?", [kept], spy,
                                       StripSettings(), reference=[left_out])
    assert spy.lists == [["Volga. The Volga flows into the Caspian Sea.", "Thames. The Thames flows through London."]]
    assert [k["id"] for k in knowledge] == ["v"] and knowledge[0]["text"] == kept["text"]
    assert stats["strips"] == 1 and stats["reference_strips"] == 1 and len(stats["scores"]) == 1


def unit(*values):
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_coverage_is_the_design_formula():
    q = unit(1, 0, 0)
    c = np.stack([unit(1, 1, 0), unit(1, 0, 1)])
    mean = c.mean(axis=0)
    expected = 0.3 * float(mean @ q / np.linalg.norm(mean)) + 0.7 * float(np.max(c @ q))
    assert coverage(q, c, 0.3) == pytest.approx(expected)
    assert coverage(q, np.zeros((0, 3)), 0.5) == 0.0


def test_greedy_selection_takes_the_complementary_facet_before_a_near_duplicate():
    q = unit(1, 1, 0)
    facet_a, facet_a_again, facet_b, off_topic = (
        unit(1, 0.05, 0),
        unit(1, 0.06, 0),
        unit(0.05, 1, 0),
        unit(0, 0, 1),
    )
    vectors = np.stack([facet_a, facet_a_again, facet_b, off_topic])
    chosen, gains = greedy_coverage(q, vectors, [10, 10, 10, 10], alpha=0.5, budget_chars=20)
    assert set(chosen) == {0, 2} or set(chosen) == {1, 2}
    assert gains[0] > 0 and gains[1] > 0


def test_greedy_selection_respects_the_context_budget():
    q = unit(1, 1, 0)
    vectors = np.stack([unit(1, 0, 0), unit(0, 1, 0), unit(1, 1, 0.1)])
    chosen, _ = greedy_coverage(q, vectors, [60, 60, 500], alpha=0.5, budget_chars=130)
    assert 2 not in chosen and sum([60, 60, 500][i] for i in chosen) <= 130
