"""Two measurement folders paired question by question: counts, Truth and its interval per run and group."""

from __future__ import annotations

import json

from cragraph_lab.before_after import compare, outcome


def _write(folder, rows):
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_runs_are_paired_by_question_and_split_by_answerability(tmp_path):
    rows = [{"mode": "crag-multihop", "id": str(i), "answers": ["Baku"], "unanswerable": i % 2 == 1,
             "answer": "Baku [1]", "abstained": False} for i in range(4)]
    _write(tmp_path / "before" / "truth" / "set", rows)
    after = [dict(r, answer="", abstained=True) if r["unanswerable"] else r for r in rows]
    _write(tmp_path / "after" / "truth" / "set", [*after, {**rows[0], "id": "only-after"}])
    table = compare(tmp_path / "before", tmp_path / "after")
    lines = {line.split(" | ")[2]: line for line in table.splitlines()[2:]}
    assert "| 4 | 4/0/0 | 2/0/2 |" in lines["all"]  # the question only the after run has is not paired
    assert "+1.000 -> +0.500" in lines["all"] and "-0.500 [" in lines["all"]
    assert "| 2 | 2/0/0 | 2/0/0 |" in lines["answerable"]


def test_a_folder_runs_outcome_is_its_own_and_a_qa_run_is_scored_by_contains():
    assert outcome({"outcome": "wrong", "answer": "Baku"}) == "wrong"
    assert outcome({"answers": ["Baku"], "answer": "in Baku [2]", "abstained": False}) == "right"
    assert outcome({"answers": [], "answer": "Baku", "abstained": False}) == "wrong"
    assert outcome({"answers": ["Baku"], "answer": "", "abstained": True}) == "abstained"
