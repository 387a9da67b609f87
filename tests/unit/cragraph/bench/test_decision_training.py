"""Abstention thresholds chosen offline from records that never abstained."""

from __future__ import annotations

import json

from cragraph.bench.abstention import kept, read_records, truth_grid, without_margin
from cragraph.bench.reader_examples import in_validation, unseen_by_reader, validation_key


def record(answer: str, margin: float | None, evidence: float, abstained: bool = False) -> dict:
    return {"mode": "crag", "set": "train", "answers": ["Gdansk"], "answer": answer, "abstained": abstained,
            "margin": margin, "best_evidence": evidence}


def test_thresholds_turn_doubtful_answers_into_abstentions_and_keep_graph_abstentions():
    assert kept(record("Warsaw [1]", 2.0, 0.5), -1.0, 3.0)["abstained"]
    assert kept(record("Warsaw [1]", 9.0, -0.5), -0.2, 0.0)["abstained"]
    assert not kept(record("Gdansk [1]", None, 0.5), 0.0, 9.0)["abstained"]  # a rule's answer has no margin
    assert kept(record("", None, 0.0, abstained=True), -1.0, 0.0)["abstained"]
    graded = {**record("Warsaw [1]", 9.0, 0.5), "answer_grade": -0.6}
    assert kept(graded, -1.0, 0.0, -0.5)["abstained"] and not kept(graded, -1.0, 0.0, -0.7)["abstained"]
    assert not kept(record("Warsaw [1]", 9.0, 0.5), -1.0, 0.0, 0.9)["abstained"]  # ungraded: not gated by grade


def test_the_grid_finds_the_grade_that_separates_right_from_wrong():
    records = [{**record("Gdansk [1]", 9.0, 0.5), "answer_grade": 0.4}, {**record("Warsaw [1]", 9.0, 0.5),
                                                                          "answer_grade": -0.6}]
    best = truth_grid(records, "crag", [-1.0], [-100.0])[0]
    assert best["mean"] == 0.5 and -0.6 < best["min_grade"] <= 0.4


def test_the_best_pair_abstains_on_the_wrong_answers_only():
    records = [record("Gdansk [1]", 9.5, 0.6), record("Gdansk [2]", 8.0, 0.4), record("Warsaw [1]", 3.0, 0.5),
               record("Lodz [1]", 4.5, 0.3)]
    best = truth_grid(records, "crag")[0]
    assert best["mean"] == 0.5 and 4.5 < best["min_margin"] <= 8.0  # 2 right, 2 abstained: (1 + 1) / 4
    assert truth_grid(records, "crag", [-1.0], [-100.0])[0]["mean"] == 0.0  # answering everything: 2 - 2


def _passage_on(side: bool) -> str:
    """An XQuAD passage id whose number falls in (side=True) or out of the reader's validation split, on the
    'train' half of the passage split."""
    from cragraph.bench.training_data import xquad_part

    return next(f"xquad-en-{n:06d}" for n in range(1000)
                if in_validation(f"xq{n:06d}") == side and xquad_part(f"xquad-en-{n:06d}") == "train")


def test_only_questions_the_reader_never_trained_on_count_as_unseen(tmp_path):
    seen, held = _passage_on(False), _passage_on(True)
    assert validation_key("xquad_train__en", "q1", [held]) == "xq" + held[-6:]
    assert not unseen_by_reader("xquad_train__en", "q1", [seen])
    assert unseen_by_reader("xquad_train__en", "q2", [held])  # its validation split
    assert unseen_by_reader("hotpotqa_migres200", "q3", ["hpqa-000001"])  # a set it never trains on
    assert not unseen_by_reader("hipporag_legacy_train100__musique", "q4", [])  # no gold: cannot tell, so seen
    run = tmp_path / "xquad_train__en"
    run.mkdir()
    rows = [{**record("Gdansk [1]", 0.9, 0.5), "id": q, "gold_ids": [g]} for q, g in (("q1", seen), ("q2", held))]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [r["id"] for r in read_records([run / "results.jsonl"])] == ["q1", "q2"]
    assert [r["id"] for r in read_records([run / "results.jsonl"], reader_unseen=True)] == ["q2"]


def test_runs_made_before_the_margin_was_recorded_are_named():
    old = {"mode": "crag", "set": "old_run", "answer": "Gdansk [1]", "abstained": False, "confidence": 0.9}
    rule = {**old, "set": "rules", "confidence": None}  # a rule's answer never has a margin
    assert without_margin([old, rule, record("Gdansk [1]", 9.0, 0.5)]) == ["old_run"]
