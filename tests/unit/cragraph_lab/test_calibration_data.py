"""The reader-unseen folders: only questions of the reader's validation split, each with its corpus."""

from __future__ import annotations

import json
from pathlib import Path

from cragraph_lab.calibration_data import write_reader_unseen
from cragraph_lab.reader_examples import NQ_FIRST_TRAIN, in_validation
from cragraph_lab.training_data import xquad_part


def _write(folder: Path, questions: list[dict], corpus: list[dict]) -> None:
    folder.mkdir(parents=True)
    for name, rows in (("questions.jsonl", questions), ("corpus.jsonl", corpus)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_only_questions_the_reader_never_trained_on_are_written(tmp_path: Path) -> None:
    nq_corpus = [{"id": f"nq-{i}", "title": "", "text": f"passage {i}"} for i in range(600)]
    nq = [{"id": f"q{i}", "question": f"q {i}?", "answers": ["a"], "supporting_ids": [f"nq-{i}"]} for i in range(600)]
    _write(tmp_path / "data" / "nq_open_oracle_litm", nq, nq_corpus)
    for language in ("en", "ru", "zh"):
        corpus = [{"id": f"xquad-{language}-{n:06d}", "title": "", "text": f"text {n}"} for n in range(200)]
        questions = [{"id": f"{language}{n}", "question": "?", "answers": ["a"], "supporting_ids": [c["id"]]}
                     for n, c in enumerate(corpus)]
        _write(tmp_path / "data" / "xquad_ru_zh_en" / language, questions, corpus)

    folders = write_reader_unseen(tmp_path / "data", tmp_path / "out")

    assert [f.name for f in folders] == ["nq_open_oracle_litm", "xquad_en", "xquad_ru", "xquad_zh"]
    written = [q["id"] for q in _read(folders[0] / "questions.jsonl")]
    expected = [f"q{i}" for i in range(NQ_FIRST_TRAIN, 600) if in_validation(f"q{i}")]  # NQ splits by question id
    assert written == expected and 0 < len(written) < 600 - NQ_FIRST_TRAIN
    assert len(_read(folders[0] / "corpus.jsonl")) == 600  # asked against the whole corpus
    for folder in folders[1:]:
        passages = {p["id"] for p in _read(folder / "corpus.jsonl")}
        assert passages and all(xquad_part(p) == "train" for p in passages)
        questions = _read(folder / "questions.jsonl")
        assert 0 < len(questions) < len(passages)  # the validation split of the half, not all of it
        for q in questions:
            passage = q["supporting_ids"][0]
            assert passage in passages and in_validation("xq" + passage[-6:])  # XQuAD splits by passage number
