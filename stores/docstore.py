"""SQLite store of chunks, their metadata, their named entities and their integer row ids.

The row id (never reused) is the key BM25, FAISS and the entity field use; metadata filters are SQL over the
chunks table. Entities live in a table of their own, created on first write, so opening a docstore written
before entities existed changes nothing in its file (its checksum in the bundle manifest stays valid).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stores.types import Chunk

DOCSTORE_FILE = "docstore.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    row INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
"""
_ENTITY_SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    row INTEGER PRIMARY KEY,
    names TEXT NOT NULL
);
"""

# Columns a filter may name directly; anything else is looked up in the metadata JSON.
_COLUMNS = {"id", "doc_id", "title"}
_RANGE_OPERATORS = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"}
_SQLITE_INT = (-(2**63), 2**63 - 1)


class FilterError(ValueError):
    """A metadata filter that cannot be run (wrong type, unknown operator, a value SQLite cannot hold); the
    message names the field and says what is accepted, so a caller can show it as is."""


class DocStore:
    def __init__(self, path: Path):
        self.path = path
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def next_row(self) -> int:
        return (self._db.execute("SELECT MAX(row) FROM chunks").fetchone()[0] or 0) + 1

    def add(self, rows: Sequence[int], chunks: Sequence[Chunk]) -> None:
        """Insert chunks; ValueError naming the chunk when its metadata is not strict JSON (NaN, Infinity),
        which SQLite's JSON functions would later reject as malformed for every filter over the table."""
        records = []
        for r, c in zip(rows, chunks, strict=True):
            try:
                metadata = json.dumps(c.metadata, ensure_ascii=False, allow_nan=False)
            except ValueError as error:
                raise ValueError(f"chunk {c.id!r}: metadata is not valid JSON ({error})") from None
            records.append((int(r), c.id, c.doc_id, c.title, c.text, metadata))
        self._db.executemany(
            "INSERT INTO chunks(row, id, doc_id, title, text, metadata) VALUES (?, ?, ?, ?, ?, ?)", records)
        self._db.commit()

    def delete_documents(self, doc_ids: Iterable[str]) -> list[int]:
        """Remove every chunk of the given documents; returns their row ids."""
        doc_ids = list(doc_ids)
        rows: list[int] = []
        for batch in _batches(doc_ids):
            marks = ",".join("?" * len(batch))
            found = [r for (r,) in self._db.execute(f"SELECT row FROM chunks WHERE doc_id IN ({marks})", batch)]
            self._db.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", batch)
            rows += found
        if rows and self.has_entities():
            for batch in _batches(rows):
                self._db.execute(f"DELETE FROM entities WHERE row IN ({','.join('?' * len(batch))})", batch)
        self._db.commit()
        return rows

    # ---- entities ------------------------------------------------------------------------------------------

    def has_entities(self) -> bool:
        """Whether entities were ever written here (docstores from before the entity field have no table)."""
        return self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entities'").fetchone() is not None

    def set_entities(self, rows: Sequence[int], entities: Sequence[Sequence[str]]) -> None:
        """Store (or replace) the normalized entities of each row."""
        if len(rows) != len(entities):
            raise ValueError(f"{len(rows)} rows for {len(entities)} entity lists")
        self._db.executescript(_ENTITY_SCHEMA)
        self._db.executemany("INSERT OR REPLACE INTO entities(row, names) VALUES (?, ?)",
                             [(int(r), json.dumps(list(n), ensure_ascii=False))
                              for r, n in zip(rows, entities, strict=True)])
        self._db.commit()

    def entities_of(self, rows: Sequence[int]) -> list[list[str]]:
        """Entities per row, in the given order ([] for a row without any or a docstore without entities)."""
        if not self.has_entities():
            return [[] for _ in rows]
        found: dict[int, list[str]] = {}
        for batch in _batches([int(r) for r in rows]):
            marks = ",".join("?" * len(batch))
            for row, names in self._db.execute(f"SELECT row, names FROM entities WHERE row IN ({marks})", batch):
                found[row] = json.loads(names)
        return [found.get(int(r), []) for r in rows]

    def iter_entities(self) -> Iterable[tuple[int, list[str]]]:
        """(row, entities) for every chunk, in row order; [] where none were recorded."""
        if not self.has_entities():
            for row, _ in self.iter_rows():
                yield row, []
            return
        for row, names in self._db.execute(
            "SELECT c.row, e.names FROM chunks c LEFT JOIN entities e ON e.row = c.row ORDER BY c.row"
        ):
            yield row, json.loads(names) if names else []

    def document_hashes(self) -> dict[str, str]:
        """doc_id -> content hash recorded at ingestion (empty string when none was recorded)."""
        return {d: h or "" for d, h in self._db.execute(
            "SELECT doc_id, json_extract(metadata, '$.content_hash') FROM chunks GROUP BY doc_id")}

    def document_ids(self) -> set[str]:
        return {d for (d,) in self._db.execute("SELECT DISTINCT doc_id FROM chunks")}

    def metadata_values(self, key: str) -> set[Any]:
        """The distinct values of one metadata key over all chunks (None where a chunk lacks it)."""
        return {v for (v,) in self._db.execute("SELECT DISTINCT json_extract(metadata, ?) FROM chunks", [f'$."{key}"'])}

    def get(self, rows: Sequence[int]) -> list[Chunk]:
        """Chunks for the given row ids, in the given order."""
        found: dict[int, Chunk] = {}
        for batch in _batches([int(r) for r in rows]):
            marks = ",".join("?" * len(batch))
            for row, cid, doc_id, title, text, meta in self._db.execute(
                f"SELECT row, id, doc_id, title, text, metadata FROM chunks WHERE row IN ({marks})", batch
            ):
                found[row] = Chunk(id=cid, doc_id=doc_id, title=title, text=text, metadata=json.loads(meta))
        return [found[int(r)] for r in rows]

    def rows_of(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Chunk id -> row id for the ids that exist."""
        found: dict[str, int] = {}
        for batch in _batches(list(dict.fromkeys(chunk_ids))):
            marks = ",".join("?" * len(batch))
            found.update(self._db.execute(f"SELECT id, row FROM chunks WHERE id IN ({marks})", batch).fetchall())
        return found

    def iter_rows(self) -> Iterable[tuple[int, Chunk]]:
        for row, cid, doc_id, title, text, meta in self._db.execute(
            "SELECT row, id, doc_id, title, text, metadata FROM chunks ORDER BY row"
        ):
            yield row, Chunk(id=cid, doc_id=doc_id, title=title, text=text, metadata=json.loads(meta))

    def filter_rows(self, filters: Mapping[str, Any]) -> np.ndarray:
        """Row ids whose fields match every filter.

        A filter value is a scalar (equality), a list (any of), {"prefix": "cs."}, or a range such as
        {"gte": "2024-01-01", "lte": "2024-12-31"} (operators gte, gt, lte, lt; either bound optional; string
        bounds compare as strings, so ISO dates work, number bounds as numbers; a value of the other type never
        matches). Keys are `id`, `doc_id`, `title` or any metadata key (category, language, source, date, ...).
        A list may also hold prefix and range mappings (any of them matches). Anything else raises FilterError.
        """
        check_filters(filters)
        clauses, params = [], []
        for key, value in filters.items():
            column = key if key in _COLUMNS else "json_extract(metadata, ?)"
            key_params = [] if key in _COLUMNS else [f'$."{key}"']
            if isinstance(value, list | tuple | set | frozenset):
                scalars = [item for item in value if not isinstance(item, Mapping)]
                alternatives = [_mapping_clause(key, column, key_params, item)
                                for item in value if isinstance(item, Mapping)]
                if scalars:
                    alternatives.append((f"{column} IN ({','.join('?' * len(scalars))})", key_params + scalars))
                clauses.append("(" + (" OR ".join(clause for clause, _ in alternatives) or "0") + ")")
                params += [param for _, clause_params in alternatives for param in clause_params]
            elif isinstance(value, Mapping):
                clause, clause_params = _mapping_clause(key, column, key_params, value)
                clauses.append(clause)
                params += clause_params
            else:
                clauses.append(f"{column} = ?")
                params += key_params + [value]
        where = " AND ".join(clauses) or "1"
        rows = [r for (r,) in self._db.execute(f"SELECT row FROM chunks WHERE {where} ORDER BY row", params)]
        return np.asarray(rows, dtype=np.int64)


def check_filters(filters: Any) -> None:
    """Raise FilterError unless `filters` is a mapping of field names to values filter_rows can run: a
    scalar (string, finite number within SQLite's 64-bit integers, bool, None), {"prefix": string}, a range of
    string or number bounds, or a list of those. Checked before any SQL is built, so a caller gets one clear
    message instead of a sqlite3 ProgrammingError, an OverflowError or an AttributeError."""
    if not isinstance(filters, Mapping):
        raise FilterError(f"filters must be a mapping of field -> value, e.g. {{'language': 'en'}}; got "
                          f"{type(filters).__name__} {_short(filters)}")
    for key, value in filters.items():
        if (not isinstance(key, str) or not key or '"' in key or "\\" in key or not _is_unicode(key)
                or any(ord(char) < 32 for char in key)):  # NUL ends SQLite's JSON path: "JSON path error"
            raise FilterError(f"filter field {_short(key)} must be a non-empty string without quotes, "
                              f"backslashes or control characters")
        if isinstance(value, list | tuple | set | frozenset):
            for item in value:
                if isinstance(item, Mapping):
                    _check_spec(key, item)
                else:
                    _check_scalar(key, item, "a list item")
        elif isinstance(value, Mapping):
            _check_spec(key, value)
        else:
            _check_scalar(key, value, "the value")


def _check_spec(key: str, spec: Mapping[Any, Any]) -> None:
    if set(spec) == {"prefix"}:
        if not isinstance(spec["prefix"], str) or not _is_unicode(spec["prefix"]):
            raise FilterError(f"filter {key!r}: 'prefix' must be a string, got {_short(spec['prefix'])}")
        return
    unknown = set(spec) - set(_RANGE_OPERATORS)
    if not spec or unknown:
        raise FilterError(f"filter {key!r}: unknown operator(s) {sorted(map(str, unknown)) or '(none given)'} in "
                          f"{_short(dict(spec))}; use {{'prefix': ...}} or a range with {sorted(_RANGE_OPERATORS)}")
    for op, bound in spec.items():
        if isinstance(bound, bool) or not isinstance(bound, str | int | float):
            raise FilterError(f"filter {key!r}: the {op!r} bound must be a string or a number, got {_short(bound)}")
        _check_scalar(key, bound, f"the {op!r} bound")
    if len({isinstance(bound, str) for bound in spec.values()}) > 1:  # no value lies between "a" and 1
        raise FilterError(f"filter {key!r}: the bounds of {_short(dict(spec))} mix strings and numbers; give "
                          f"strings (ISO dates compare as strings) or numbers")


def _check_scalar(key: str, value: Any, what: str) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        if not _is_unicode(value):
            raise FilterError(f"filter {key!r}: {what} is not valid Unicode (a lone surrogate)")
    elif isinstance(value, int):
        if not _SQLITE_INT[0] <= value <= _SQLITE_INT[1]:
            raise FilterError(f"filter {key!r}: {what} {_short(value)} is outside the 64-bit integers an index "
                              f"stores")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise FilterError(f"filter {key!r}: {what} must be a finite number, got {value}")
    else:
        raise FilterError(f"filter {key!r}: {what} must be a string, a number, true/false, null, a list of them, "
                          f"{{'prefix': ...}} or a range; got {type(value).__name__} {_short(value)}")


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _mapping_clause(key: str, column: str, key_params: list[Any], spec: Mapping[str, Any]
                    ) -> tuple[str, list[Any]]:
    """SQL for {"prefix": p} or a range {"gte"/"gt"/"lte"/"lt": bound, ...}."""
    if set(spec) == {"prefix"}:
        return f"substr({column}, 1, ?) = ?", key_params + [len(str(spec["prefix"])), str(spec["prefix"])]
    parts, params = [], []
    for op, bound in spec.items():
        kinds = "('text')" if isinstance(bound, str) else "('integer', 'real')"
        parts.append(f"(typeof({column}) IN {kinds} AND {column} {_RANGE_OPERATORS[op]} ?)")
        params += key_params + key_params + [bound]
    return " AND ".join(parts), params


def _batches(items: list, size: int = 900) -> Iterable[list]:
    """SQLite caps bound parameters; keep IN lists under the limit."""
    for start in range(0, len(items), size):
        yield items[start:start + size]
