"""QA metrics: SQuAD normalization, EM / F1 (characters for Chinese), containment, citations, aggregation."""

from __future__ import annotations

import math

import pytest

from cragraph.evaluation.qa_metrics import (
    aggregate,
    answer_in_context,
    answer_tokens,
    by_type,
    citation_precision,
    contains_answer,
    exact_match,
    normalize_answer,
    recall_curve,
    score_record,
    stage_latency,
    strip_citations,
    token_f1,
)


def test_squad_normalization_drops_case_punctuation_articles():
    assert normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_answer("An apple, a pear") == "apple pear"


def test_exact_match_ignores_citation_markers_and_takes_best_gold():
    assert exact_match("Rush [1]", ["The Rush", "Spurs"]) == 1.0
    assert exact_match("Rush band [1]", ["Rush"]) == 0.0


def test_token_f1_partial_overlap():
    assert token_f1("the Canadian band Rush", ["Rush"]) == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert token_f1("", ["Rush"]) == 0.0
    assert token_f1("Spurs", ["Rush", "Spurs"]) == 1.0


def test_chinese_is_scored_by_characters():
    assert answer_tokens("18 球") == ["18", "球"]
    assert answer_tokens("哈卡维18球") == ["哈", "卡", "维", "18", "球"]
    # whitespace tokens would give 0 here: the prediction is one "word" that differs from the gold
    assert token_f1("共计18球入网", ["18 球"]) == pytest.approx(2 * (2 / 6) * 1 / (2 / 6 + 1))
    assert exact_match("18球。", ["18 球"]) == 0.0  # normalization keeps the space of the gold


def test_contains_whole_words_only_for_alphabetic_answers():
    assert contains_answer("The band was Rush. [1]", ["Rush"]) == 1.0
    assert contains_answer("They rushed home.", ["Rush"]) == 0.0
    assert contains_answer("防守丢了18球", ["18球"]) == 1.0


def test_answer_in_context_and_citation_precision():
    assert answer_in_context(["Neil Peart drummed for Rush.", "other"], ["Rush"]) == 1.0
    assert answer_in_context(["nothing here"], ["Rush"]) == 0.0
    assert citation_precision(["d1", "d2", "d1"], ["d1"]) == 0.5
    assert citation_precision([], ["d1"]) is None


def test_abstention_scores_zero_but_keeps_context_recall():
    record = {"answers": ["Rush"], "answer": "Rush", "abstained": True, "context": ["Rush is a band"],
              "cited_doc_ids": [], "gold_ids": ["d1"]}
    scores = score_record(record)
    assert scores["EM"] == scores["F1"] == scores["Contains"] == 0.0
    assert scores["InContext"] == 1.0 and scores["Abstain"] == 1.0 and scores["CitePrec"] is None


def _record(em: float, ranked: list[str], stages: dict[str, float], kind: str, total: float) -> dict:
    return {"scores": {"EM": em, "F1": em, "Contains": em, "SemMatch": None, "InContext": 1.0,
                       "CitePrec": None, "Abstain": 0.0},
            "ranked_doc_ids": ranked, "gold_ids": ["g1", "g2"], "stages": stages, "type": kind,
            "total_ms": total}


def test_aggregate_recall_latency_and_types():
    records = [_record(1.0, ["g1", "x", "g2"], {"retrieve": 10, "answer": 5}, "bridge", 15),
               _record(0.0, ["x", "y", "z"], {"retrieve": 30}, "comparison", 30)]
    summary = aggregate(records)
    assert summary["EM"] == 0.5
    assert summary["SemMatch"] is None  # no value at all -> no mean, not zero
    assert summary["R@1"] == 0.25 and summary["R@5"] == 0.5
    assert summary["p50_ms"] == pytest.approx(22.5)
    curve = recall_curve(records, max_k=3)
    assert curve == [0.25, 0.25, 0.5]
    stages = stage_latency(records)
    assert stages["retrieve"]["runs"] == 2 and stages["answer"]["runs"] == 1
    assert stages["retrieve"]["p50_ms"] == 20
    types = by_type(records)
    assert set(types) == {"bridge", "comparison"} and types["bridge"]["EM"] == 1.0
    assert by_type([{**records[0], "type": None}]) == {}


def test_strip_citations_and_empty_latency():
    assert strip_citations("A [1] B [12].") == "A B."
    assert math.isnan(aggregate([])["p50_ms"])


def test_a_list_answer_is_right_when_it_names_three_quarters_of_the_items():
    from cragraph.evaluation.qa_metrics import holds_answer

    items = [["Portico"], ["Tallyroll"], ["Loomwright"], ["Sounding", "the planner"]]
    assert holds_answer("Portico, Tallyroll, the planner [1]", [], items)  # 3 of 4, one by its other form
    assert not holds_answer("Portico, Tallyroll [1]", ["Portico"], items)  # 2 of 4: a gold form alone is not enough
    assert holds_answer("Portico [1]", ["Portico"]) and not holds_answer("anything", [])
