"""Which index backend holds an index: the on-disk bundle (the default) or a Milvus collection.

Both expose what retrieval reads (docstore, bm25, dense, entities, graph, embedder, settings, manifest, path),
so everything above this module takes an `Index` and never asks which one it has. `location` is the bundle's
folder, or for Milvus a Milvus Lite file (`FILE.db`) or a server URI (`http://host:19530`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from stores.bm25 import BM25Index
from stores.bundle import IndexBundle, IndexSettings, IngestReport, load_bundle
from stores.docstore import DocStore
from stores.milvus.connection import check_uri
from stores.milvus.index import MilvusIndex
from stores.milvus.views import MilvusBM25, MilvusDocStore

BACKENDS = ("bundle", "milvus")
DEFAULT_BACKEND = "bundle"

Index = IndexBundle | MilvusIndex
Lexical = BM25Index | MilvusBM25
"""What term statistics are read from: a bundle's BM25 index, or Milvus' (its lexicon)."""
DocStoreView = DocStore | MilvusDocStore


def check_backend(backend: str) -> str:
    """The backend's name; ValueError naming the known ones for anything else."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown index backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    return backend


def open_index(backend: str, location: str | Path, embedder: str | None = None) -> Index:
    """Open (and verify) an index; `embedder`, when given, must be the one it was built with."""
    if check_backend(backend) == "milvus":
        return MilvusIndex.open(check_uri(str(location)), embedder=embedder)
    return IndexBundle.open(location, embedder=embedder)


def index_exists(backend: str, location: str | Path) -> bool:
    """Whether an index is at `location` (for Milvus: a collection of cragraph's name at that URI)."""
    if check_backend(backend) == "milvus":
        return MilvusIndex.exists(check_uri(str(location)))
    return Path(location).exists()


def build_index(backend: str, location: str | Path, sources: Sequence[str | Path],
                settings: IndexSettings | None = None, progress: bool = True,
                follow_symlinks: bool = False, bm25_terms: str = "cragraph") -> tuple[Index, IngestReport]:
    """Build a new index from files or folders, replacing the one at `location`. `bm25_terms` (Milvus only):
    what its BM25 function reads, our tokenizer's terms or the raw passage for Milvus' own analyzer."""
    if check_backend(backend) == "milvus":
        return MilvusIndex.build(check_uri(str(location)), sources, settings, progress=progress,
                                 follow_symlinks=follow_symlinks, bm25_terms=bm25_terms)
    return IndexBundle.build(location, sources, settings, progress=progress, follow_symlinks=follow_symlinks)


_OPEN: dict[str, MilvusIndex] = {}
_OPEN_LOCK = threading.Lock()


def load_index(backend: str, location: str | Path) -> Index:
    """The index at `location`, opened once per process and brought up to date when another writer changed it
    (the bundle by its manifest's mtime, Milvus by re-reading its manifest)."""
    if check_backend(backend) == "bundle":
        return load_bundle(location)
    uri = check_uri(str(location))
    with _OPEN_LOCK:
        index = _OPEN.get(uri)
        if index is None:
            index = _OPEN[uri] = MilvusIndex.open(uri)
        else:
            index.refresh()
        return index
