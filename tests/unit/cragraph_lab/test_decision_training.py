"""The answer decision's training: labels, out-of-fold calibration, the reader-unseen split."""

from __future__ import annotations

import json

import numpy as np

from cragraph_lab.decision_training import (
    VARIANTS,
    calibration,
    chosen,
    old_gates,
    read_questions,
    train_decision,
    truth,
)
from cragraph_lab.reader_examples import in_validation, unseen_by_reader, validation_key
from rag.answering.decision import load_decision
from rag.answering.features import FEATURES


def candidate(answer: str, reading: str = "one_pass", **features: float) -> dict:
    return {"answer": answer, "reading": reading,
            "features": {name: 0.0 for name in FEATURES} | {reading: 1.0} | features}


def test_a_candidate_is_right_when_it_holds_a_gold_answer_and_each_question_keeps_its_split(tmp_path):
    run = tmp_path / "hipporag_legacy_train100__hotpotqa"
    run.mkdir()
    rows = [{"mode": "crag-multihop", "id": "q1", "answers": ["Hammerfest"], "gold_ids": [], "unanswerable": True,
             "candidates": [candidate("Hammerfest, Norway [2]", "hop_chain"), candidate("Tromsø [1]")]},
            {"mode": "crag", "id": "q2", "answers": ["x"], "candidates": [candidate("x")]}]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (question,) = read_questions([run / "results.jsonl"])
    assert question.labels.tolist() == [1.0, 0.0] and question.readings == ["hop_chain", "one_pass"]
    assert question.unanswerable and not question.unseen  # no gold ids: cannot tell, so counted as seen


def test_calibration_error_is_zero_when_probabilities_match_the_share_right_and_truth_counts_abstentions():
    picked = [(0.75, 1.0)] * 3 + [(0.75, 0.0)] + [(0.25, 0.0)] * 3 + [(0.25, 1.0)]
    assert calibration(picked)["ece"] == 0.0
    assert calibration([(0.9, 0.0), (0.9, 0.0)])["ece"] == 0.9
    assert truth(picked) == (3 - 1) / 8  # the 0.25s abstain at 0.5
    assert truth(picked, threshold=0.0) == (4 - 4) / 8


def test_the_most_probable_candidate_is_chosen_and_a_question_without_one_abstains(tmp_path):
    run = tmp_path / "set"
    run.mkdir()
    rows = [{"mode": "crag-multihop", "id": "q1", "answers": ["Gdansk"],
             "candidates": [candidate("Warsaw"), candidate("Gdansk")]},
            {"mode": "crag-multihop", "id": "q2", "answers": ["Gdansk"], "candidates": []}]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    questions = read_questions([run / "results.jsonl"])
    assert chosen(questions, [np.array([0.2, 0.7]), np.zeros(0)]) == [(0.7, 1.0), (0.0, 0.0)]


def test_the_replaced_gates_answered_a_wide_margin_on_a_well_graded_passage_only(tmp_path):
    run = tmp_path / "set"
    run.mkdir()
    cases = [candidate("a", margin=0.8, graded=1.0, grade=0.2, best_evidence=0.5),
             candidate("a", margin=0.6, graded=1.0, grade=0.2, best_evidence=0.5),
             candidate("a", margin=0.8, graded=1.0, grade=-0.7, best_evidence=0.5),
             candidate("a", "compared", best_evidence=0.5)]
    rows = [{"mode": "crag-multihop", "id": f"q{i}", "answers": ["a"], "candidates": [c]} for i, c in enumerate(cases)]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [old_gates(q)[0] for q in read_questions([run / "results.jsonl"])] == [1.0, 0.0, 0.0, 1.0]


def test_training_chooses_signals_by_leaving_a_set_out_and_writes_weights_that_load(tmp_path):
    rng = np.random.default_rng(0)
    runs = []
    for name in ("set_a", "set_b", "set_c"):
        run = tmp_path / name
        run.mkdir()
        rows = []
        for i in range(120):
            margin, noise = float(rng.normal()), float(rng.normal())
            right = rng.random() < 1 / (1 + np.exp(-3 * margin))
            rows.append({"mode": "crag-multihop", "id": f"q{i}", "answers": ["Gdansk"],
                         "candidates": [candidate("Gdansk" if right else "Warsaw", margin=margin, ru=noise)]})
        (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        runs.append(run / "results.jsonl")
    out, plot = tmp_path / "decision.json", tmp_path / "reliability.png"
    report = train_decision(runs, out, plot)
    assert report["calibration_all"]["ece"] < 0.1 and plot.stat().st_size > 1000
    weights = json.loads(out.read_text())
    assert weights["trained"]["questions"] == 360 and len(weights["calibration"]) == 2
    lodo = report["leave_one_set_out"]
    assert set(lodo) == set(VARIANTS) and all(set(part) == {"set_a", "set_b", "set_c"} for part in lodo.values())
    assert all(part["set_a"]["truth"] > 0.2 for part in lodo.values())  # the margin carries to the set left out
    assert "| set left out |" in (tmp_path / "MODEL_CARD.md").read_text()
    load_decision(str(out))


def test_one_training_set_is_fitted_without_leaving_it_out(tmp_path):
    run = tmp_path / "set"
    run.mkdir()
    rows = [{"mode": "crag-multihop", "id": f"q{i}", "answers": ["Gdansk"],
             "candidates": [candidate("Gdansk" if i % 3 else "Warsaw", margin=float(i % 3))]} for i in range(60)]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = train_decision([run / "results.jsonl"], tmp_path / "decision.json")
    assert report["leave_one_set_out"] == {} and report["variant"] == next(iter(VARIANTS))


def _passage_on(side: bool) -> str:
    """An XQuAD passage id whose number falls in (side=True) or out of the reader's validation split, on the
    'train' half of the passage split."""
    from cragraph_lab.training_data import xquad_part

    return next(f"xquad-en-{n:06d}" for n in range(1000)
                if in_validation(f"xq{n:06d}") == side and xquad_part(f"xquad-en-{n:06d}") == "train")


def test_only_questions_the_reader_never_trained_on_count_as_unseen():
    seen, held = _passage_on(False), _passage_on(True)
    assert validation_key("xquad_train__en", "q1", [held]) == "xq" + held[-6:]
    assert not unseen_by_reader("xquad_train__en", "q1", [seen])
    assert unseen_by_reader("xquad_train__en", "q2", [held])  # its validation split
    assert unseen_by_reader("hotpotqa_migres200", "q3", ["hpqa-000001"])  # a set it never trains on
    assert not unseen_by_reader("hipporag_legacy_train100__musique", "q4", [])  # no gold: cannot tell, so seen
