"""A searchable entity field over chunk rows: which passages name which entities, scored by rarity.

Why a field of its own: BM25 splits "New York Times" into three common words and the embedder blurs it into a
topic; here an entity is one key. A query entity scores a row by its IDF, log(1 + N / df), when the row has
exactly that entity, and by a discounted share of it (PARTIAL_WEIGHT x the IDF-weighted token overlap) when they
only share words ("obama" and "barack obama"); a row's score is the sum over the query's entities.
Entities arrive normalized (stores.ner); keys here are only casefolded and whitespace-collapsed again.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1
ROWS_FILE = "entity_rows.npz"
VOCAB_FILE = "entities.json"
PARTIAL_WEIGHT = 0.5
"""A token-overlap match is worth at most this share of an exact match."""
MAX_PARTIAL_FANOUT = 5000
"""Tokens shared by more entities than this (e.g. "university") are too common to find partial matches by."""
_NONE: frozenset[str] = frozenset()


def entity_key(name: str) -> str:
    return " ".join(name.casefold().split())


def _tokens(key: str) -> set[str]:
    return {t for t in key.replace("-", " ").replace("·", " ").split() if len(t) > 1 or not t.isascii()}


class EntityIndex:
    """Entities per row (the docstore's chunk row ids) with posting lists for lookup."""

    def __init__(self) -> None:
        self._by_row: dict[int, list[str]] = {}
        self._postings: dict[str, set[int]] = defaultdict(set)
        self._by_token: dict[str, set[str]] = defaultdict(set)
        self._token_df: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._by_row)

    @property
    def vocabulary_size(self) -> int:
        return len(self._postings)

    @property
    def rows_with_entities(self) -> int:
        return sum(1 for keys in self._by_row.values() if keys)

    def vocabulary(self) -> list[str]:
        return list(self._postings)

    def has_row(self, row: int) -> bool:
        return int(row) in self._by_row

    # ---- changing ------------------------------------------------------------------------------------------

    def add(self, rows: Sequence[int], entities: Sequence[list[str]]) -> None:
        """Record each row's entities; a row already present is replaced. Rows with no entity are kept (they
        count in N for the IDF) but match nothing."""
        if len(rows) != len(entities):
            raise ValueError(f"{len(rows)} rows for {len(entities)} entity lists")
        self.delete([int(r) for r in rows if int(r) in self._by_row])
        for row, names in zip(rows, entities, strict=True):
            row = int(row)
            keys = list(dict.fromkeys(k for k in map(entity_key, names) if k))
            self._by_row[row] = keys
            for key in keys:
                if not self._postings[key]:
                    for token in _tokens(key):
                        self._by_token[token].add(key)
                self._postings[key].add(row)
        self._token_df.clear()

    def delete(self, rows: Iterable[int]) -> None:
        for row in rows:
            for key in self._by_row.pop(int(row), []):
                posting = self._postings.get(key)
                if posting is None:
                    continue
                posting.discard(int(row))
                if not posting:
                    del self._postings[key]
                    for token in _tokens(key):
                        self._by_token[token].discard(key)
                        if not self._by_token[token]:
                            del self._by_token[token]
        self._token_df.clear()

    # ---- reading -------------------------------------------------------------------------------------------

    def entities_of(self, rows: Sequence[int]) -> list[list[str]]:
        return [list(self._by_row.get(int(r), [])) for r in rows]

    def search(self, entities: Sequence[str], pool: int, allowed: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Rows naming the query entities, best first (ties by row), at most `pool`; `allowed` restricts rows."""
        scores: dict[int, float] = defaultdict(float)
        for key in dict.fromkeys(k for k in map(entity_key, entities) if k):
            for row, score in self._match(key).items():
                scores[row] += score
        if not scores:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        rows = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
        values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
        if allowed is not None:
            keep = np.isin(rows, np.asarray(allowed, dtype=np.int64))
            rows, values = rows[keep], values[keep]
        order = np.lexsort((rows, -values))[: max(0, int(pool))]
        return rows[order], values[order]

    def _match(self, key: str) -> dict[int, float]:
        """Row -> the best score one query entity gets on it (exact beats any partial match)."""
        best: dict[int, float] = {}
        exact = self._postings.get(key)
        if exact:
            weight = self._idf(len(exact))
            best = dict.fromkeys(exact, weight)
        query_tokens = _tokens(key)
        candidates: set[str] = set()
        for token in query_tokens:
            sharing = self._by_token.get(token, _NONE)
            if len(sharing) <= MAX_PARTIAL_FANOUT:
                candidates |= sharing
        candidates.discard(key)
        for other in candidates:
            overlap = self._overlap(query_tokens, _tokens(other))
            if overlap <= 0:
                continue
            score = PARTIAL_WEIGHT * overlap * self._idf(len(self._postings[other]))
            for row in self._postings[other]:
                if score > best.get(row, 0.0):
                    best[row] = score
        return best

    def _idf(self, df: int) -> float:
        return math.log(1.0 + max(len(self._by_row), 1) / max(df, 1))

    def _overlap(self, a: set[str], b: set[str]) -> float:
        """Token Jaccard weighted by each token's rarity, so sharing "university" counts for little."""
        shared = a & b
        if not shared:
            return 0.0
        union = a | b
        return sum(map(self._token_idf, shared)) / sum(map(self._token_idf, union))

    def _token_idf(self, token: str) -> float:
        """IDF of a word over rows (rows with any entity containing it), computed on demand and cached."""
        df = self._token_df.get(token)
        if df is None:
            rows: set[int] = set()
            for key in self._by_token.get(token, _NONE):
                rows |= self._postings[key]
            df = self._token_df[token] = len(rows)
        return self._idf(df)

    # ---- persistence ---------------------------------------------------------------------------------------

    def save(self, folder: str | Path) -> list[str]:
        """Write the field into `folder`; returns the file names written (relative to `folder`)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        vocab = sorted(self._postings)
        ids = {key: i for i, key in enumerate(vocab)}
        rows = np.asarray(sorted(self._by_row), dtype=np.int64)
        lengths = np.asarray([len(self._by_row[int(r)]) for r in rows], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        entity_ids = np.asarray([ids[k] for r in rows for k in self._by_row[int(r)]], dtype=np.int32)
        with open(folder / ROWS_FILE, "wb") as handle:
            np.savez(handle, rows=rows, indptr=indptr, entity_ids=entity_ids)
        (folder / VOCAB_FILE).write_text(
            json.dumps({"format_version": FORMAT_VERSION, "entities": vocab}, ensure_ascii=False), encoding="utf-8")
        return [ROWS_FILE, VOCAB_FILE]

    @classmethod
    def load(cls, folder: str | Path) -> EntityIndex:
        folder = Path(folder)
        meta = json.loads((folder / VOCAB_FILE).read_text(encoding="utf-8"))
        if meta.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"{folder / VOCAB_FILE}: entity index format {meta.get('format_version')}, "
                             f"expected {FORMAT_VERSION}")
        vocab = meta["entities"]
        with np.load(folder / ROWS_FILE) as arrays:
            rows, indptr, entity_ids = arrays["rows"], arrays["indptr"], arrays["entity_ids"]
        index = cls()  # filled directly: the saved keys are already normalized and deduplicated per row
        ids, bounds = entity_ids.tolist(), indptr.tolist()
        postings = index._postings
        for position, row in enumerate(rows.tolist()):
            keys = [vocab[i] for i in ids[bounds[position]:bounds[position + 1]]]
            index._by_row[row] = keys
            for key in keys:
                postings[key].add(row)
        for key in vocab:
            for token in _tokens(key):
                index._by_token[token].add(key)
        return index
