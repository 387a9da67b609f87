"""CRAG thresholds: the suggestion meets its precision on each side, decisions follow CRAG's rule, thresholds
are stored per index folder, and the bm25 baseline's normalization."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cragraph_lab.evaluator_eval import bm25_normalized, markdown_table
from evaluators.base import grade
from evaluators.thresholds import (
    THRESHOLDS_FILE,
    Thresholds,
    decision_report,
    load_thresholds,
    save_thresholds,
    suggest_thresholds,
    verdicts,
)
from stores.types import Chunk, Hit


def test_verdicts_agree_with_the_crag_grade_of_whole_lists():
    lists = [[0.9, -0.5], [-0.95, -0.99], [0.1, -0.2], []]
    thresholds = Thresholds(upper=0.5, lower=-0.9)
    best = [max(s, default=-np.inf) for s in lists]
    assert verdicts(best, thresholds) == [grade(s, 0.5, -0.9) for s in lists]


def test_suggested_thresholds_meet_the_precision_on_each_side():
    rng = np.random.default_rng(0)
    truth = rng.random(400) < 0.5
    best = np.clip(np.where(truth, rng.normal(0.5, 0.3, 400), rng.normal(-0.5, 0.3, 400)), -1, 1)
    t = suggest_thresholds(best, truth, precision=0.99)
    assert -1 <= t.lower <= t.upper <= 1
    assert truth[best > t.upper].mean() >= 0.99
    assert (~truth[best < t.lower]).mean() >= 0.99
    report = decision_report(best, truth, t)
    assert report.decisive_accuracy >= 0.99 and 0 < report.ambiguous_rate < 0.5
    assert sum(report.counts.values()) == 400


def test_perfectly_separated_scores_need_no_ambiguous_band():
    best = [0.9, 0.8, 0.7, -0.6, -0.7]
    truth = [True, True, True, False, False]
    t = suggest_thresholds(best, truth)
    report = decision_report(best, truth, t)
    assert report.accuracy == 1.0 and report.ambiguous_rate == 0.0


def test_unreachable_precision_falls_back_to_the_best_single_cut():
    best = [0.5, 0.5, 0.5, 0.5]
    truth = [True, False, True, False]
    t = suggest_thresholds(best, truth, precision=0.99)
    assert t.lower <= t.upper


def test_thresholds_are_stored_per_index_and_per_evaluator(tmp_path):
    assert load_thresholds(tmp_path, "embedded") is None
    path = save_thresholds(tmp_path, "embedded", Thresholds(0.4, -0.8), {"dataset": "demo"})
    save_thresholds(tmp_path, "cosine", Thresholds(0.1, -0.2))
    assert path == tmp_path / THRESHOLDS_FILE
    assert load_thresholds(tmp_path, "embedded") == Thresholds(0.4, -0.8)
    assert load_thresholds(tmp_path, "cosine") == Thresholds(0.1, -0.2)
    assert json.loads(path.read_text())["embedded"]["dataset"] == "demo"
    with pytest.raises(FileNotFoundError):
        save_thresholds(tmp_path / "absent", "embedded", Thresholds(0, 0))
    path.write_text("{broken")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_thresholds(tmp_path)


def _hit(bm25: float | None) -> Hit:
    scores = {"fused": 0.1} if bm25 is None else {"fused": 0.1, "bm25": bm25}
    return Hit(chunk=Chunk(id="c", doc_id="d", text="t"), score=0.1, scores=scores)


def test_bm25_baseline_is_the_score_over_the_lists_best():
    assert bm25_normalized([_hit(4.0), _hit(2.0), _hit(None)]) == [1.0, 0.5, 0.0]
    assert bm25_normalized([_hit(None)]) == [0.0] and bm25_normalized([]) == []


def test_report_table_has_one_row_per_scorer():
    from cragraph_lab.evaluator_eval import EvaluatorEvalReport, ScorerResult

    counts = {"correct": 1, "ambiguous": 0, "incorrect": 1}
    report = EvaluatorEvalReport("demo", 2, 20, 2, 1.0, [
        ScorerResult(name, 0.9, Thresholds(0.5, -0.5), 1.0, 0.0, counts, counts)
        for name in ("embedded", "cosine", "bm25")])
    rows = markdown_table(report).splitlines()
    assert [r.split("|")[1].strip() for r in rows[2:]] == ["embedded", "cosine", "bm25"]


def test_grade_node_prefers_thresholds_stored_in_the_index(tmp_path):
    from types import SimpleNamespace

    from evaluators.thresholds import Thresholds, save_thresholds
    from nodes._runtime import thresholds_for
    from rag.context import Context
    from tests.fixtures.graph import use_operator

    bundle = SimpleNamespace(path=tmp_path)
    use_operator(grade={"upper": 0.2, "lower": -0.5})
    settings = Context(index=str(tmp_path), evaluator="embedded")
    assert thresholds_for(settings, bundle) == (0.2, -0.5, "[grade]")
    save_thresholds(tmp_path, "embedded", Thresholds(upper=0.7, lower=0.1), {})
    assert thresholds_for(settings, bundle) == (0.7, 0.1, "calibrated for this index")
    other = Context(index=str(tmp_path), evaluator="cosine")
    assert thresholds_for(other, bundle)[2] == "[grade]"
