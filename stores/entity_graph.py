"""The entity-passage graph of a bundle (HippoRAG 2's dual nodes) and personalized PageRank over it.

Nodes are the chunks (by docstore row) and the entities the entity field found in them. Edges:
  mention      entity - chunk it is named in (weighted by the entity's rarity, so a walk leaves a passage
               through its specific names rather than "United States");
  co-occurs    entity - entity named in the same chunk (derived from the mentions when the walk is prepared);
  synonym      entity - entity whose names match after a looser normalization ("the beatles" / "beatles");
  neighbour    chunk - chunk among each other's nearest vectors (cosine at least KNN_MIN_COSINE).
The graph is derived entirely from the entity field and the stored vectors, so the bundle rebuilds it on every
write (nothing to re-embed) and a deleted document's nodes and edges go with its rows.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from stores.entity_index import entity_key

GRAPH_FILE = "graph.npz"
FORMAT_VERSION = 1
KNN = 5
KNN_MIN_COSINE = 0.8
"""Neighbour edges below this cosine join passages that merely share a topic."""
_ARTICLE = re.compile(r"^(the|a|an)\s+")
_PUNCT = re.compile(r"[^\w\s]")


@dataclass(frozen=True)
class WalkWeights:
    """How much each edge kind counts in the walk's transitions (mention edges count 1)."""

    neighbour: float = 0.0
    cooccurrence: float = 0.1
    synonym: float = 1.0


def synonym_key(key: str) -> str:
    """A looser form of an entity key: accents, punctuation, a leading article and a possessive dropped."""
    text = unicodedata.normalize("NFKD", entity_key(key))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = _PUNCT.sub(" ", text.replace("'s ", " ").removesuffix("'s"))
    return _ARTICLE.sub("", " ".join(text.split()))


class EntityGraph:
    """Chunk and entity nodes with sparse edge matrices; `walk` ranks chunks by personalized PageRank."""

    def __init__(self, rows: np.ndarray, entities: Sequence[str], mentions: sp.csr_matrix,
                 neighbours: sp.csr_matrix, synonyms: sp.csr_matrix):
        self.rows = np.asarray(rows, dtype=np.int64)
        self.entities = list(entities)
        self.mentions = mentions.tocsr()  # chunks x entities, 1 where the chunk names the entity
        self.neighbours = neighbours.tocsr()  # chunks x chunks, cosine, symmetric
        self.synonyms = synonyms.tocsr()  # entities x entities, 1, symmetric
        self._position = {int(r): i for i, r in enumerate(self.rows.tolist())}
        self._entity_id = {name: i for i, name in enumerate(self.entities)}
        self._by_synonym: dict[str, list[int]] = {}
        for i, name in enumerate(self.entities):
            self._by_synonym.setdefault(synonym_key(name), []).append(i)
        self._frequency = np.asarray(self.mentions.sum(axis=0)).ravel()  # chunks naming each entity
        self._transitions = lru_cache(maxsize=4)(self._transposed_transitions)

    @property
    def edge_counts(self) -> dict[str, int]:
        return {"mention": int(self.mentions.nnz), "neighbour": int(self.neighbours.nnz // 2),
                "synonym": int(self.synonyms.nnz // 2)}

    # ---- building ------------------------------------------------------------------------------------------

    @classmethod
    def build(cls, rows: Sequence[int], entities_per_row: Sequence[Sequence[str]], vectors: np.ndarray,
              knn: int = KNN, min_cosine: float = KNN_MIN_COSINE,
              neighbours: sp.csr_matrix | None = None) -> EntityGraph:
        """The graph of chunks `rows` (with their entities and unit vectors, in the same order); `neighbours`, when
        given, replaces the exact neighbour pass (the bundle gives its HNSW index's on large corpora)."""
        keys = [list(dict.fromkeys(k for k in map(entity_key, names) if k)) for names in entities_per_row]
        vocabulary = sorted({k for row_keys in keys for k in row_keys})
        ids = {k: i for i, k in enumerate(vocabulary)}
        pairs = [(r, ids[k]) for r, row_keys in enumerate(keys) for k in row_keys]
        chunk_ids = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
        entity_ids = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs))
        mentions = sp.csr_matrix((np.ones(len(pairs)), (chunk_ids, entity_ids)), shape=(len(rows), len(vocabulary)))
        if neighbours is None:
            neighbours = nearest_neighbours(np.asarray(vectors, dtype=np.float32), knn, min_cosine)
        return cls(np.asarray(rows, dtype=np.int64), vocabulary, mentions, neighbours, _synonym_edges(vocabulary))

    # ---- walking -------------------------------------------------------------------------------------------

    def entity_ids(self, names: Sequence[str]) -> list[int]:
        """Graph entities a question's names link to: the same key, else the same looser key."""
        found: list[int] = []
        for key in dict.fromkeys(k for k in map(entity_key, names) if k):
            exact = self._entity_id.get(key)
            found += [exact] if exact is not None else self._by_synonym.get(synonym_key(key), [])
        return list(dict.fromkeys(found))

    def walk(self, row_seeds: Mapping[int, float], entity_seeds: Sequence[int], damping: float,
             weights: WalkWeights = WalkWeights(), allowed: np.ndarray | None = None, iterations: int = 30
             ) -> tuple[np.ndarray, np.ndarray]:
        """Rows by personalized PageRank mass, best first. Seeds: chunk rows with weights, and entity nodes
        each weighted by 1 / (chunks naming it), as HippoRAG does. Rows outside `allowed` neither receive nor
        pass on mass."""
        chunks = len(self.rows)
        seed = np.zeros(chunks + len(self.entities))
        for row, weight in row_seeds.items():
            position = self._position.get(int(row))
            if position is not None and weight > 0:
                seed[position] += weight
        if entity_seeds:
            ids = np.asarray(entity_seeds, dtype=np.int64)
            seed[chunks + ids] += 1.0 / np.maximum(self._frequency[ids], 1.0)
        mask = self._allowed_mask(allowed)
        if mask is not None:
            seed[:chunks] *= mask
        if seed.sum() <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        seed /= seed.sum()
        transitions, mass = self._transitions(weights), seed.copy()
        for _ in range(iterations):
            mass = (1.0 - damping) * seed + damping * (transitions @ mass)
            if mask is not None:
                mass[:chunks] *= mask
        scores = mass[:chunks]
        order = np.lexsort((self.rows, -scores))
        order = order[scores[order] > 0]
        return self.rows[order], scores[order]

    def _allowed_mask(self, allowed: np.ndarray | None) -> np.ndarray | None:
        if allowed is None:
            return None
        return np.isin(self.rows, np.asarray(allowed, dtype=np.int64)).astype(np.float64)

    def _transposed_transitions(self, weights: WalkWeights) -> sp.csr_matrix:
        """The column-stochastic transition matrix of the weighted, undirected graph (so mass @ P^T walks)."""
        chunks = len(self.rows)
        rarity = sp.diags(np.log1p(max(chunks, 1) / np.maximum(self._frequency, 1.0)))
        mention = self.mentions @ rarity
        cooccurs = (self.mentions.T @ self.mentions).tocsr()
        cooccurs.setdiag(0)
        cooccurs.eliminate_zeros()
        cooccurs.data[:] = 1.0
        entity_edges = weights.cooccurrence * cooccurs + weights.synonym * self.synonyms
        adjacency = sp.bmat([[weights.neighbour * self.neighbours, mention],
                             [mention.T, entity_edges]]).tocsr()
        degree = np.asarray(adjacency.sum(axis=1)).ravel()
        degree[degree == 0] = 1.0
        return (sp.diags(1.0 / degree) @ adjacency).T.tocsr()

    # ---- persistence ---------------------------------------------------------------------------------------

    def save(self, folder: str | Path) -> list[str]:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = {"format_version": np.asarray(FORMAT_VERSION), "rows": self.rows,
                  "entities": np.asarray(self.entities, dtype=str)}
        for name in ("mentions", "neighbours", "synonyms"):
            matrix = getattr(self, name)
            arrays |= {f"{name}_data": matrix.data, f"{name}_indices": matrix.indices,
                       f"{name}_indptr": matrix.indptr, f"{name}_shape": np.asarray(matrix.shape)}
        with open(folder / GRAPH_FILE, "wb") as handle:
            np.savez(handle, **arrays)
        return [GRAPH_FILE]

    @classmethod
    def load(cls, folder: str | Path) -> EntityGraph:
        path = Path(folder) / GRAPH_FILE
        with np.load(path) as arrays:
            if int(arrays["format_version"]) != FORMAT_VERSION:
                raise ValueError(f"{path}: graph format {int(arrays['format_version'])}, expected {FORMAT_VERSION}")
            matrices = {name: sp.csr_matrix((arrays[f"{name}_data"], arrays[f"{name}_indices"],
                                             arrays[f"{name}_indptr"]), shape=tuple(arrays[f"{name}_shape"]))
                        for name in ("mentions", "neighbours", "synonyms")}
            return cls(arrays["rows"], arrays["entities"].tolist(), **matrices)


def nearest_neighbours(vectors: np.ndarray, knn: int, min_cosine: float, block: int = 1024) -> sp.csr_matrix:
    """Each chunk's `knn` most similar chunks at cosine >= min_cosine, made symmetric (exact, in blocks)."""
    count = len(vectors)
    if count < 2 or knn <= 0:
        return sp.csr_matrix((count, count))
    take = min(knn, count - 1)
    sources, targets, cosines = [], [], []
    for start in range(0, count, block):
        similarity = vectors[start:start + block] @ vectors.T
        np.fill_diagonal(similarity[:, start:start + block], -np.inf)
        best = np.argpartition(-similarity, take - 1, axis=1)[:, :take]
        values = np.take_along_axis(similarity, best, axis=1)
        keep = values >= min_cosine
        sources.append(np.nonzero(keep)[0] + start)
        targets.append(best[keep])
        cosines.append(values[keep])
    matrix = sp.csr_matrix((np.concatenate(cosines), (np.concatenate(sources), np.concatenate(targets))),
                           shape=(count, count))
    return matrix.maximum(matrix.T).tocsr()


def neighbour_matrix(found: np.ndarray, cosines: np.ndarray, min_cosine: float = KNN_MIN_COSINE) -> sp.csr_matrix:
    """Symmetric neighbour edges from per-node neighbour lists (-1: none), keeping cosines >= min_cosine."""
    count = len(found)
    keep = (found >= 0) & (cosines >= min_cosine)
    sources = np.nonzero(keep)[0]
    matrix = sp.csr_matrix((cosines[keep], (sources, found[keep])), shape=(count, count))
    return matrix.maximum(matrix.T).tocsr()


def _synonym_edges(vocabulary: Sequence[str]) -> sp.csr_matrix:
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(vocabulary):
        groups.setdefault(synonym_key(key), []).append(i)
    pairs = [(a, b) for ids in groups.values() if len(ids) > 1 for a in ids for b in ids if a != b]
    size = len(vocabulary)
    if not pairs:
        return sp.csr_matrix((size, size))
    left, right = zip(*pairs, strict=True)
    return sp.csr_matrix((np.ones(len(pairs)), (left, right)), shape=(size, size))
