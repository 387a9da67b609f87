"""Abstention thresholds chosen offline from records that never abstained."""

from __future__ import annotations

from cragraph.bench.abstention import kept, truth_grid


def record(answer: str, confidence: float | None, evidence: float, abstained: bool = False) -> dict:
    return {"mode": "crag", "set": "train", "answers": ["Gdansk"], "answer": answer, "abstained": abstained,
            "confidence": confidence, "best_evidence": evidence}


def test_thresholds_turn_doubtful_answers_into_abstentions_and_keep_graph_abstentions():
    assert kept(record("Warsaw [1]", 0.2, 0.5), -1.0, 0.3)["abstained"]
    assert kept(record("Warsaw [1]", 0.9, -0.5), -0.2, 0.0)["abstained"]
    assert not kept(record("Gdansk [1]", None, 0.5), 0.0, 0.9)["abstained"]  # a rule's answer has no confidence
    assert kept(record("", None, 0.0, abstained=True), -1.0, 0.0)["abstained"]


def test_the_best_pair_abstains_on_the_wrong_answers_only():
    records = [record("Gdansk [1]", 0.8, 0.6), record("Gdansk [2]", 0.7, 0.4), record("Warsaw [1]", 0.2, 0.5),
               record("Lodz [1]", 0.25, 0.3)]
    best = truth_grid(records, "crag")[0]
    assert best["mean"] == 0.5 and 0.25 < best["min_confidence"] <= 0.7  # 2 right, 2 abstained: (1 + 1) / 4
    assert truth_grid(records, "crag", [-1.0], [0.0])[0]["mean"] == 0.0  # answering everything: 2 - 2
