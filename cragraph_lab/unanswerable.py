"""Unanswerable questions for the truthfulness benchmark.

A seeded share of a set's questions is asked of an index from which the gold passages of all of them were
removed: from that index the right reply is an abstention (or an answer found on the web). The reduced corpus
and its index are built once per (set, removed documents) and cached; the embedding cache makes the build cheap
once the full index exists.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cragraph_lab.datasets import Dataset, Question
from models.paths import cache_root
from stores.bundle import BundleError, IndexBundle, IndexSettings

DEFAULT_SEED = 13


def choose_unanswerable(questions: Sequence[Question], fraction: float, seed: int = DEFAULT_SEED) -> set[str]:
    """Ids of round(fraction x questions) questions, the same for the same questions, fraction and seed."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"--unanswerable must be a share between 0 and 1, not {fraction}")
    ids = sorted(q.id for q in questions)
    return set(random.Random(seed).sample(ids, round(fraction * len(ids))))


def removed_documents(questions: Sequence[Question], unanswerable: set[str]) -> set[str]:
    """Every gold document of the unanswerable questions."""
    return {doc for q in questions if q.id in unanswerable for doc in q.supporting_ids}


def corpus_rows(dataset: Dataset) -> list[dict[str, Any]]:
    with open(dataset.corpus_file, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def reduced_index(dataset: Dataset, removed: set[str], embedder: str, index_root: Path | None = None,
                  progress: bool = True) -> IndexBundle:
    """The dataset's index without the `removed` documents, built once and reused."""
    digest = hashlib.sha256("\n".join(sorted(removed)).encode("utf-8")).hexdigest()[:12]
    root = index_root or cache_root() / "bench-indexes"
    name = f"{dataset.name.replace('/', '__')}--{embedder.replace('/', '__')}--minus-{digest}"
    path = root / name
    try:
        return IndexBundle.open(path, embedder=embedder)
    except BundleError:
        pass
    corpus = root / "reduced-corpora" / name / "corpus.jsonl"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    kept = [row for row in corpus_rows(dataset) if str(row["id"]) not in removed]
    tmp = corpus.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
    tmp.replace(corpus)
    bundle, report = IndexBundle.build(path, [corpus], IndexSettings(embedder=embedder), progress=progress)
    print(f"indexed {dataset.name} without {len(removed)} gold documents: {report.summary()}")
    return bundle
