"""decision-replay: a run's recorded candidates decided again, paired with another run."""

from __future__ import annotations

import json

from cragraph_lab.decision_replay import redecided, replay
from rag.answering.decision import load_decision
from rag.answering.features import MODEL_FEATURES


def _weights(path):
    coef = [2.0 if name == "margin" else 0.0 for name in MODEL_FEATURES]
    n = len(MODEL_FEATURES)
    path.write_text(json.dumps({"features": list(MODEL_FEATURES), "mean": [0.0] * n, "scale": [1.0] * n,
                                "coef": coef, "intercept": 0.0}), encoding="utf-8")
    return load_decision(str(path))


def _record(qid, candidates, answer="", abstained=True, answers=("Skarnvik",)):
    return {"mode": "crag-multihop", "id": qid, "answers": list(answers), "answer": answer, "abstained": abstained,
            "candidates": [{"answer": text, "reading": reading, "features": {reading: 1.0, "margin": margin}}
                           for text, reading, margin in candidates]}


def test_the_best_candidate_is_answered_above_the_threshold_a_rule_answer_alike(tmp_path):
    model = _weights(tmp_path / "w.json")
    sure = _record("a", [("Halvmere", "one_pass", -1.0), ("Skarnvik", "per_passage", 2.0)])
    assert redecided(sure, model, 0.5)["answer"] == "Skarnvik" and not redecided(sure, model, 0.5)["abstained"]
    unsure = _record("b", [("Halvmere", "one_pass", -1.0)])
    assert redecided(unsure, model, 0.5)["abstained"]
    ruled = _record("c", [("Halvmere", "one_pass", 2.0), ("no", "yes_no", -3.0)])
    assert redecided(ruled, model, 0.5)["answer"] == "Halvmere"  # no rule answer is given past the decision


def test_replay_pairs_the_redecided_run_with_the_old_one(tmp_path):
    model = _weights(tmp_path / "w.json")
    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    new.write_text("\n".join(json.dumps(r) for r in [
        _record("a", [("Skarnvik", "per_passage", 2.0)]),
        _record("b", [("Halvmere", "one_pass", 3.0)]),
    ]), encoding="utf-8")
    old.write_text("\n".join(json.dumps(r) for r in [
        _record("a", [], answer="Halvmere", abstained=False),
        _record("b", [], abstained=True),
    ]), encoding="utf-8")
    rows = {row["metric"]: row for row in replay(new, old, model)}
    assert rows["EM"]["old"] == 0.0 and rows["EM"]["new"] == 0.5  # a is right now, b answered wrongly
    assert rows["Truth"]["old"] == -0.5 and rows["Truth"]["new"] == 0.0
    assert rows["Abstain"]["old"] == 0.5 and rows["Abstain"]["new"] == 0.0
