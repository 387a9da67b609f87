"""FAISS inner-product search over L2-normalized chunk vectors.

Vectors are kept beside the FAISS index (vectors.npy) because rerank and selection need chunk vectors, and
because an HNSW graph cannot delete: deleting rebuilds the graph from the stored vectors, never re-embeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import faiss
import numpy as np

INDEX_FILE = "dense.faiss"
VECTORS_FILE = "vectors.npy"
IDS_FILE = "dense_ids.npy"


class DenseIndex:
    """Exact inner-product search for small corpora, HNSW above `hnsw_threshold` vectors."""

    def __init__(self, dim: int, hnsw_threshold: int = 50_000, hnsw_m: int = 32, ef_search: int = 128):
        self.dim = dim
        self.hnsw_threshold = hnsw_threshold
        self.hnsw_m = hnsw_m
        self.ef_search = ef_search
        self.ids = np.zeros(0, dtype=np.int64)
        self.vectors = np.zeros((0, dim), dtype=np.float32)
        self._row_of: dict[int, int] = {}
        self._index: faiss.Index
        self._reindex()

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def kind(self) -> str:
        return "hnsw" if len(self.ids) > self.hnsw_threshold else "flat"

    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        new = np.asarray(ids, dtype=np.int64)
        if len(new) != len(vectors):
            raise ValueError(f"{len(new)} ids for {len(vectors)} vectors")
        if len(set(new.tolist()) & self._row_of.keys()):
            raise ValueError("some ids are already in the dense index")
        self.ids = np.concatenate([self.ids, new])
        self.vectors = np.concatenate([self.vectors, vectors])
        self._reindex()

    def delete(self, ids: Iterable[int]) -> int:
        gone = set(int(i) for i in ids) & self._row_of.keys()
        if not gone:
            return 0
        keep = np.array([int(i) not in gone for i in self.ids], dtype=bool)
        self.ids, self.vectors = self.ids[keep], self.vectors[keep]
        self._reindex()
        return len(gone)

    def vectors_for(self, ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of the given ids, in the given order (KeyError for an unknown id)."""
        return self.vectors[[self._row_of[int(i)] for i in ids]]

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Ids and inner products of the k nearest vectors, best first; `allowed` restricts to those ids."""
        if not len(self.ids) or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        if allowed is not None:
            # A filtered search is exact: the filtered set is usually small, and HNSW recall drops under filters.
            rows = np.array([self._row_of[i] for i in np.asarray(allowed).tolist() if i in self._row_of], np.int64)
            if not len(rows):
                return np.zeros(0, np.int64), np.zeros(0, np.float32)
            scores = self.vectors[rows] @ query[0]
            top = np.argsort(-scores, kind="stable")[:k]
            return self.ids[rows[top]], scores[top]
        scores, rows = self._index.search(query, min(k, len(self.ids)))
        found = rows[0] >= 0
        return self.ids[rows[0][found]], scores[0][found]

    def neighbour_lists(self, ids: Sequence[int], k: int, batch: int = 4096) -> tuple[np.ndarray, np.ndarray]:
        """For each of `ids`, the positions (in `ids`) and inner products of its k nearest others among `ids`,
        through the index itself (approximate above the HNSW threshold, where an exact all-pairs pass would
        cost hours); -1 where fewer were found. `ids` must be every stored id."""
        if sorted(map(int, ids)) != sorted(self._row_of):
            raise ValueError("neighbour_lists needs every stored id")
        position = np.full(int(self.ids.max()) + 1 if len(self.ids) else 0, -1, dtype=np.int64)
        position[np.asarray(ids, dtype=np.int64)] = np.arange(len(ids))
        vectors = self.vectors_for(ids)
        found, scores = [], []
        for start in range(0, len(vectors), batch):
            block_scores, block_rows = self._index.search(vectors[start:start + batch], k + 1)
            neighbours = np.where(block_rows >= 0, position[self.ids[np.maximum(block_rows, 0)]], -1)
            own = neighbours == np.arange(start, start + len(block_rows))[:, None]
            neighbours[own] = -1
            found.append(neighbours)
            scores.append(block_scores)
        return np.concatenate(found), np.concatenate(scores)

    def save(self, folder: Path) -> list[str]:
        np.save(folder / VECTORS_FILE, self.vectors)
        np.save(folder / IDS_FILE, self.ids)
        faiss.write_index(self._index, str(folder / INDEX_FILE))
        return [VECTORS_FILE, IDS_FILE, INDEX_FILE]

    @classmethod
    def load(cls, folder: Path, dim: int, hnsw_threshold: int = 50_000) -> DenseIndex:
        index = cls(dim, hnsw_threshold=hnsw_threshold)
        index.vectors = np.load(folder / VECTORS_FILE)
        index.ids = np.load(folder / IDS_FILE)
        if index.vectors.shape != (len(index.ids), dim):
            raise ValueError(f"dense vectors have shape {index.vectors.shape}, expected ({len(index.ids)}, {dim})")
        index._row_of = {int(i): r for r, i in enumerate(index.ids)}
        index._index = faiss.read_index(str(folder / INDEX_FILE))
        if index._index.ntotal != len(index.ids):
            raise ValueError("FAISS index and stored vectors disagree in size")
        index._set_search_params()
        return index

    def _reindex(self) -> None:
        self._row_of = {int(i): r for r, i in enumerate(self.ids)}
        index: faiss.Index
        if self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(self.dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 200
        else:
            index = faiss.IndexFlatIP(self.dim)
        if len(self.vectors):
            index.add(self.vectors)
        self._index = index
        self._set_search_params()

    def _set_search_params(self) -> None:
        if isinstance(self._index, faiss.IndexHNSW):
            self._index.hnsw.efSearch = self.ef_search
