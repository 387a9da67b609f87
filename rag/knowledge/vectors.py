"""Vectors of questions and passages, computed once per process: several stages need the same ones.

Index passages are represented by the vectors stored at index time (no re-embedding); other passages (web
results) are embedded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from evaluators.cosine import forget_passage_vectors
from models.embedder import Embedder
from rag.knowledge.passages import passage_text
from stores.backend import Index

_QUERY_VECTORS: OrderedDict[tuple[int, str], np.ndarray] = OrderedDict()
_QUERY_VECTORS_LOCK = threading.Lock()
_QUERY_VECTORS_MAX = 256


def forget_vectors() -> None:
    """Empty the per-process query and passage vector caches, so a benchmark times each mode from the same
    start instead of letting one mode reuse the sentences another just embedded."""
    with _QUERY_VECTORS_LOCK:
        _QUERY_VECTORS.clear()
    forget_passage_vectors()


def query_vector(embedder: Embedder, text: str) -> np.ndarray:
    """The query embedding of `text`, computed once per process (several nodes need the question's)."""
    key = (id(embedder), text)
    with _QUERY_VECTORS_LOCK:
        if key in _QUERY_VECTORS:
            _QUERY_VECTORS.move_to_end(key)
            return _QUERY_VECTORS[key]
    vector = embedder.embed_queries([text])[0]
    with _QUERY_VECTORS_LOCK:
        _QUERY_VECTORS[key] = vector
        while len(_QUERY_VECTORS) > _QUERY_VECTORS_MAX:
            _QUERY_VECTORS.popitem(last=False)
    return vector


def chunk_rows(bundle: Index, chunk_ids: Sequence[str]) -> list[int]:
    """Docstore row ids (the dense index's ids) of the given chunk ids, in order."""
    if not chunk_ids:
        return []
    rows = bundle.docstore.filter_rows({"id": list(chunk_ids)}).tolist()
    row_of = {chunk.id: row for row, chunk in zip(rows, bundle.docstore.get(rows), strict=True)}
    return [row_of[cid] for cid in chunk_ids]


def stored_cosines(bundle: Index, question: str, passages: Sequence[dict[str, Any]]) -> np.ndarray:
    """cos(question, passage) from the vectors stored at index time: no re-embedding."""
    vectors = bundle.dense.vectors_for(chunk_rows(bundle, [p["id"] for p in passages]))
    return vectors @ query_vector(bundle.embedder, question)


def passage_vectors(bundle: Index, pool: list[dict[str, Any]]) -> np.ndarray:
    """Unit vectors of a passage pool: stored ones for index passages, embedded ones for the rest."""
    stored = [i for i, p in enumerate(pool) if p.get("source") == "index"]
    vectors = np.zeros((len(pool), bundle.embedder.dim), dtype=np.float32)
    if stored:
        vectors[stored] = bundle.dense.vectors_for(chunk_rows(bundle, [pool[i]["id"] for i in stored]))
    others = [i for i in range(len(pool)) if i not in set(stored)]
    if others:
        vectors[others] = bundle.embedder.embed_passages([passage_text(pool[i]) for i in others])
    return vectors
