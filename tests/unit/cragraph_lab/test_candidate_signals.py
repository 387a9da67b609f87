"""candidate_signals: a signal's ROC-AUC over the recorded span candidates, right when they hold a gold answer."""

from __future__ import annotations

import json

from cragraph_lab.candidate_signals import signal_aucs, table


def _record(answers, candidates):
    return {"answers": answers, "candidates": [
        {"answer": text, "reading": reading, "features": {"margin": margin}} for text, reading, margin in candidates]}


def test_a_signal_that_ranks_right_candidates_first_scores_one_and_rules_are_left_out(tmp_path):
    run = tmp_path / "set" / "results.jsonl"
    run.parent.mkdir()
    records = [_record(["Baku"], [("Baku", "one_pass", 0.9), ("Tbilisi", "per_passage", 0.2), ("yes", "claim", 5.0)]),
               _record([], [("1922", "one_pass", 0.1)])]
    run.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    found = signal_aucs(run, ["margin", "grade"])
    assert (found["candidates"], found["right"], found["margin"], found["grade"]) == (3, 1, 1.0, 0.5)
    assert "| set | 3 | 1 | 1.000 | 0.500 |" in table(tmp_path, ["margin", "grade"])
