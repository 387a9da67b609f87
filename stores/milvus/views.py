"""The faces of a Milvus collection that the retriever reads: a docstore, a BM25 index and a dense index.

They answer the calls HybridRetriever and the techniques make on a bundle's DocStore, BM25Index and DenseIndex
(same names, arguments and return types), so retrieval code is shared, not duplicated. Searches run in Milvus:
BM25 through the collection's BM25 function, dense through its FLAT inner-product index, filters and allowed
rows as boolean expressions. Term statistics that only some techniques read (the query analysis' rare-term
features, rule variants, RM3 feedback) come from a lexicon: an in-memory BM25Index of the collection's passages
read on first use, since Milvus keeps its BM25 statistics to itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stores.bm25 import BM25Index
from stores.milvus.filters import both, filter_expression, rows_expression
from stores.milvus.schema import CHUNK_FIELDS, chunk_of, query_bm25_terms
from stores.types import Chunk

PAGE_ROWS = 8_192  # rows per scan page and per `row in [...]` batch: under Milvus' 16,384 query window


@dataclass
class Collection:
    """The chunk collection: its client, its name and one past the largest row id ever given."""

    client: Any
    name: str
    row_end: Callable[[], int]

    def count(self) -> int:
        return int(self.client.query(self.name, filter="", output_fields=["count(*)"])[0]["count(*)"])

    def scan(self, fields: Sequence[str], expression: str = "") -> Iterator[dict[str, Any]]:
        """Every row matching `expression`, in row order, a page of row ids at a time."""
        end = self.row_end()
        for start in range(0, end, PAGE_ROWS):
            page = both(f"row >= {start} and row < {start + PAGE_ROWS}", expression)
            found = self.client.query(self.name, filter=page, output_fields=["row", *fields])
            yield from sorted(found, key=lambda record: record["row"])

    def rows(self, rows: Sequence[int], fields: Sequence[str]) -> dict[int, dict[str, Any]]:
        """Records of the given rows by row id (rows that do not exist are absent)."""
        wanted = list(dict.fromkeys(int(r) for r in rows))
        found: dict[int, dict[str, Any]] = {}
        for start in range(0, len(wanted), PAGE_ROWS):
            batch = wanted[start:start + PAGE_ROWS]
            for record in self.client.query(self.name, filter=rows_expression(batch),
                                             output_fields=["row", *fields]):
                found[int(record["row"])] = record
        return found

    def search(self, data: list[Any], field: str, metric: str, k: int, allowed: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (rows, scores) best first; `allowed` restricts to those rows."""
        empty = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        if k <= 0 or (allowed is not None and not len(allowed)):
            return empty
        expression = rows_expression(np.asarray(allowed).tolist()) if allowed is not None else ""
        found = self.client.search(self.name, data=data, anns_field=field, limit=int(k), filter=expression,
                                   output_fields=["row"], search_params={"metric_type": metric})[0]
        if not found:
            return empty
        rows = np.asarray([int(hit["entity"]["row"]) for hit in found], dtype=np.int64)
        scores = np.asarray([float(hit["distance"]) for hit in found], dtype=np.float64)
        return rows, scores


class MilvusDocStore:
    """Chunks, metadata and entities by row id, and metadata filters run as Milvus expressions."""

    def __init__(self, collection: Collection):
        self.collection = collection

    def __len__(self) -> int:
        return self.collection.count()

    def get(self, rows: Sequence[int]) -> list[Chunk]:
        """Chunks for the given row ids, in the given order (KeyError for a row that does not exist)."""
        found = self.collection.rows(rows, CHUNK_FIELDS[1:])
        return [chunk_of(found[int(r)]) for r in rows]

    def filter_rows(self, filters: Mapping[str, Any]) -> np.ndarray:
        """Row ids (sorted) whose fields match every filter: the docstore's filter syntax and meaning."""
        expression = filter_expression(filters)
        return np.asarray([r["row"] for r in self.collection.scan([], expression)], dtype=np.int64)

    def rows_of(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Chunk id -> row id for the ids that exist."""
        found: dict[str, int] = {}
        wanted = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(wanted), PAGE_ROWS):
            found.update({record["id"]: int(record["row"]) for record in self.collection.scan(
                ["id"], filter_expression({"id": wanted[start:start + PAGE_ROWS]}))})
        return found

    def iter_rows(self) -> Iterable[tuple[int, Chunk]]:
        for record in self.collection.scan(CHUNK_FIELDS[1:]):
            yield int(record["row"]), chunk_of(record)

    def metadata_values(self, key: str) -> set[Any]:
        """The distinct values of one metadata key (None where a chunk lacks it; lists and mappings as JSON
        text, as the SQLite docstore returns them)."""
        values: set[Any] = set()
        for record in self.collection.scan(["metadata"]):
            value = (record.get("metadata") or {}).get(key)
            values.add(json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value)
        return values

    def document_ids(self) -> set[str]:
        return {record["doc_id"] for record in self.collection.scan(["doc_id"])}

    def document_hashes(self) -> dict[str, str]:
        """doc_id -> content hash recorded at ingestion (empty string when none was recorded)."""
        return {record["doc_id"]: str((record.get("metadata") or {}).get("content_hash") or "")
                for record in self.collection.scan(["doc_id", "metadata"])}

    def entities_of(self, rows: Sequence[int]) -> list[list[str]]:
        found = self.collection.rows(rows, ["entities"])
        return [list(found[int(r)].get("entities") or []) if int(r) in found else [] for r in rows]

    def iter_entities(self) -> Iterable[tuple[int, list[str]]]:
        for record in self.collection.scan(["entities"]):
            yield int(record["row"]), list(record.get("entities") or [])


class MilvusDense:
    """Dense search over the collection's FLAT inner-product index (exact, like the bundle's flat FAISS)."""

    kind = "flat"

    def __init__(self, collection: Collection, dim: int):
        self.collection = collection
        self.dim = dim

    def __len__(self) -> int:
        return self.collection.count()

    @property
    def ids(self) -> np.ndarray:
        return np.asarray([r["row"] for r in self.collection.scan([])], dtype=np.int64)

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        vector = np.asarray(query, dtype=np.float32).reshape(-1).tolist()
        return self.collection.search([vector], "vector", "IP", k, allowed)

    def vectors_for(self, ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of the given rows, in order (KeyError for a row that does not exist)."""
        found = self.collection.rows(ids, ["vector"])
        if not len(ids):
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray([found[int(r)]["vector"] for r in ids], dtype=np.float32)


class MilvusBM25:
    """BM25 through Milvus' BM25 function over the `terms` field (our tokenizer's terms, or the raw passage for
    Milvus' own analyzer); scores are Milvus' BM25 (Lucene idf, k1 and b from the index settings)."""

    def __init__(self, collection: Collection, terms_mode: str, k1: float, b: float):
        self.collection = collection
        self.terms_mode = terms_mode
        self.k1, self.b = k1, b
        self._lexicon: BM25Index | None = None

    def __len__(self) -> int:
        return self.collection.count()

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (rows, scores), best first, of rows sharing a term with the query."""
        terms = query_bm25_terms(query, self.terms_mode)
        if not terms.strip():
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        rows, scores = self.collection.search([terms], "sparse", "BM25", k, allowed)
        return rows, np.abs(scores)  # BM25 is never negative; Milvus Lite reports it as a negated distance

    def scores_for(self, query: str, ids: Sequence[int]) -> np.ndarray:
        """BM25 score of each given row for `query`; 0 for rows sharing no term with it."""
        rows = np.asarray(ids, dtype=np.int64).reshape(-1)
        found_rows, found_scores = self.search(query, len(rows), allowed=rows) if len(rows) else ((), ())
        found = dict(zip(np.asarray(found_rows).tolist(), np.asarray(found_scores).tolist(), strict=True))
        return np.asarray([found.get(int(r), 0.0) for r in rows], dtype=np.float64)

    # ---- term statistics, from the lexicon -------------------------------------------------------------------

    def lexicon(self) -> BM25Index:
        """An in-memory BM25Index of the collection's passages (our tokenizer), read once per opened index."""
        if self._lexicon is None:
            lexicon = BM25Index(k1=self.k1, b=self.b)
            records = list(self.collection.scan(["title", "text"]))
            lexicon.add([int(r["row"]) for r in records], [chunk_of({**r, "id": "", "doc_id": ""}).passage
                                                            for r in records])
            self._lexicon = lexicon
        return self._lexicon

    @property
    def vocabulary_size(self) -> int:
        return self.lexicon().vocabulary_size

    def search_weighted(self, term_weights: Mapping[str, float], k: int, allowed: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
        return self.lexicon().search_weighted(term_weights, k, allowed)

    def vocabulary(self) -> dict[str, int]:
        return self.lexicon().vocabulary()

    def document_frequency(self, term: str) -> int:
        return self.lexicon().document_frequency(term)

    def idf(self, term: str) -> float | None:
        return self.lexicon().idf(term)

    def term_counts(self, doc_id: int) -> dict[str, int]:
        return self.lexicon().term_counts(doc_id)

    def documents_with(self, term: str) -> np.ndarray:
        return self.lexicon().documents_with(term)

    def cooccurrence(self, doc_ids: Sequence[int] | np.ndarray) -> dict[str, int]:
        return self.lexicon().cooccurrence(doc_ids)
