"""load_dataset: offset + limit take a slice after the reported questions, disjoint from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cragraph_lab.datasets import load_dataset


def _write_set(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True)
    rows = [{"id": f"q{i}", "question": f"question {i}?", "answers": [f"a{i}"], "supporting_ids": [f"d{i}"]}
            for i in range(n)]
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    (folder / "corpus.jsonl").write_text(json.dumps({"id": "d0", "title": "t", "text": "x"}) + "\n",
                                         encoding="utf-8")
    return folder


def test_offset_skips_the_reported_questions(tmp_path):
    folder = _write_set(tmp_path / "toy", 10)
    reported = load_dataset(folder, limit=4)
    calibration = load_dataset(folder, limit=3, offset=4)
    assert [q.id for q in reported.questions] == ["q0", "q1", "q2", "q3"]
    assert [q.id for q in calibration.questions] == ["q4", "q5", "q6"]
    assert not {q.id for q in reported.questions} & {q.id for q in calibration.questions}


def test_offset_past_the_end_is_empty_and_negative_is_refused(tmp_path):
    folder = _write_set(tmp_path / "toy", 5)
    assert load_dataset(folder, limit=60, offset=5).questions == []
    assert [q.id for q in load_dataset(folder, offset=3).questions] == ["q3", "q4"]
    with pytest.raises(ValueError, match="offset"):
        load_dataset(folder, offset=-1)
