"""Benchmark sets in the normalized format of shared/data: questions.jsonl + corpus.jsonl per folder."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Question:
    id: str
    question: str
    answers: list[str]
    supporting_ids: list[str]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Dataset:
    name: str
    folder: Path
    questions: list[Question]

    @property
    def corpus_file(self) -> Path:
        return self.folder / "corpus.jsonl"


def load_dataset(folder: str | Path, limit: int | None = None, offset: int = 0) -> Dataset:
    """Read a dataset folder; `offset` skips the first questions and `limit` keeps N of the rest (the corpus is
    always whole), so a calibration slice taken after the reported questions shares none with them."""
    folder = Path(folder)
    for name in ("questions.jsonl", "corpus.jsonl"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder} is not a dataset folder: {name} is missing "
                                    "(expected the normalized format: questions.jsonl + corpus.jsonl)")
    questions = []
    with open(folder / "questions.jsonl", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                questions.append(Question(id=str(row["id"]), question=row["question"],
                                          answers=list(row.get("answers", [])),
                                          supporting_ids=[str(s) for s in row.get("supporting_ids", [])],
                                          meta=row.get("meta", {})))
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    questions = questions[offset:]
    if limit:
        questions = questions[:limit]
    return Dataset(name=dataset_name(folder), folder=folder, questions=questions)


def dataset_name(folder: Path) -> str:
    """`xquad_ru_zh_en/ru` rather than just `ru`: nested sets are named with their parent."""
    folder = folder.resolve()
    if not (folder / "SOURCE.md").exists() and (folder.parent / "SOURCE.md").exists():
        return f"{folder.parent.name}/{folder.name}"
    return folder.name
