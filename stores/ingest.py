"""What one index write adds, whichever backend stores it: the documents that are new or changed (by content
hash), the ids they replace, the pages a re-read PDF no longer has, and the new chunks with their vectors.

The bundle and the Milvus index share it, so "unchanged", "replaced" and the chunking of a write mean the same
on both; each backend then stores the result its own way.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from stores.chunking import chunk_documents
from stores.embed_cache import content_hash, embed_passages_cached
from stores.loaders import stale_pages
from stores.types import Chunk, Document

log = logging.getLogger("cragraph.ingest")

LONG_DOCUMENT_CHARS = 1_000_000
"""A document this long is named, with its size and chunk count, before indexing starts: each of its sentences
and then each of its chunks is embedded, which on a CPU takes minutes per million characters (hours for a 20 MB
file), and nothing else would say so up front."""


class ChunkSettings(Protocol):
    min_chars: int
    max_chars: int
    merge_threshold: float
    whole_doc_chars: int


def document_hash(doc: Document) -> str:
    return content_hash(doc.title + "\n" + doc.text)


def changed_documents(docs: Sequence[Document], existing: Mapping[str, str]
                      ) -> tuple[list[Document], list[str], list[str], int]:
    """(fresh, replaced, gone, unchanged): documents to index (new or changed, their hash in metadata), the ids
    they replace, the stale pages of re-read PDFs, and how many were unchanged."""
    fresh: list[Document] = []
    replaced: list[str] = []
    unchanged = 0
    for doc in docs:
        old_hash, new_hash = existing.get(doc.id), document_hash(doc)
        if old_hash == new_hash:
            unchanged += 1
            continue
        if old_hash is not None:
            replaced.append(doc.id)
        doc.metadata = {**doc.metadata, "content_hash": new_hash}
        fresh.append(doc)
    return fresh, replaced, stale_pages(docs, existing), unchanged


def embedded_chunks(docs: Sequence[Document], embedder: Any, settings: ChunkSettings, progress: bool
                    ) -> tuple[list[Chunk], np.ndarray]:
    """The documents' chunks and their vectors, both embeddings (the chunker's sentences, the chunks) through
    the embedding cache, so re-chunking a corpus (a rebuild, a changed chunk setting) embeds nothing twice."""
    for warning in long_documents(docs, settings.max_chars, progress):
        log.warning(warning)

    def embed(sentences: list[str]) -> np.ndarray:
        return embed_passages_cached(embedder, sentences, progress=False)

    chunks = chunk_documents(list(docs), embed, progress=progress, min_chars=settings.min_chars,
                             max_chars=settings.max_chars, merge_threshold=settings.merge_threshold,
                             whole_doc_chars=settings.whole_doc_chars)
    if not chunks:
        return chunks, np.zeros((0, 0), dtype=np.float32)
    return chunks, embed_passages_cached(embedder, [c.passage for c in chunks], progress=progress)


def long_documents(docs: Sequence[Document], max_chars: int, progress: bool) -> list[str]:
    """A warning for each document of LONG_DOCUMENT_CHARS or more: its file, size and the fewest chunks it can
    make (its length over `max_chars`), and where to watch its progress."""
    warnings = []
    for doc in docs:
        size = len(doc.text)
        if size >= LONG_DOCUMENT_CHARS:
            where = ("the chunking bar counts its characters" if progress else
                     "progress bars are off (--quiet), so the index will look idle meanwhile")
            warnings.append(f"{doc.metadata.get('file') or doc.id}: a very long document, {size:,} characters, "
                            f"at least {size // max(1, max_chars):,} chunks; every sentence and chunk of it is "
                            f"embedded, which takes minutes per million characters on a CPU; {where}")
    return warnings
