"""The full-document read: every chunk of the best hits' documents, in document order.

What an enumeration question ("list all ...") and the last step of escalation need: top-k chunks can miss the
items a document lists past its best chunk, the whole document cannot. Reads stay within the caller's rows
(filters and access), like every search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rag.retrieval.retriever import HybridRetriever
from stores.types import Hit

DOCUMENTS = 2
"""How many of the best hits' documents are read whole."""


def whole_documents(retriever: HybridRetriever, hits: Sequence[Hit], filters: Mapping[str, Any] | None = None,
                    documents: int = DOCUMENTS) -> list[Hit]:
    """The chunks of the first `documents` distinct documents among `hits`, each document in chunk order and
    scored by its best hit."""
    best: dict[str, float] = {}
    for hit in hits:
        if hit.chunk.doc_id in best or len(best) < documents:
            best[hit.chunk.doc_id] = max(best.get(hit.chunk.doc_id, -np.inf), hit.score)
    return read_documents(retriever, best, filters)


def read_documents(retriever: HybridRetriever, scores: Mapping[str, float],
                   filters: Mapping[str, Any] | None = None) -> list[Hit]:
    """Every chunk the caller may see of each document in `scores` (doc id -> the score its chunks get), in
    the given document order and each document's chunk order."""
    allowed = retriever.allowed_rows(filters)
    read: list[Hit] = []
    for doc_id, score in scores.items():
        rows = retriever.bundle.docstore.filter_rows({"doc_id": doc_id})
        if allowed is not None:
            rows = np.intersect1d(rows, allowed)
        chunks = sorted(retriever.bundle.docstore.get(rows.tolist()),
                        key=lambda c: (int(c.metadata.get("position", 0)), c.id))
        read += [Hit(chunk=c, score=score, scores={"document": score}, sources=["full_document"]) for c in chunks]
    return read
