"""SQLite store of chunks, their metadata and their integer row ids.

The row id (never reused) is the key BM25 and FAISS use; metadata filters are SQL over this table.
"""

from __future__ import annotations

import json
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

# Columns a filter may name directly; anything else is looked up in the metadata JSON.
_COLUMNS = {"id", "doc_id", "title"}


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
        self._db.executemany(
            "INSERT INTO chunks(row, id, doc_id, title, text, metadata) VALUES (?, ?, ?, ?, ?, ?)",
            [(int(r), c.id, c.doc_id, c.title, c.text, json.dumps(c.metadata, ensure_ascii=False))
             for r, c in zip(rows, chunks, strict=True)],
        )
        self._db.commit()

    def delete_documents(self, doc_ids: Iterable[str]) -> list[int]:
        """Remove every chunk of the given documents; returns their row ids."""
        doc_ids = list(doc_ids)
        rows: list[int] = []
        for batch in _batches(doc_ids):
            marks = ",".join("?" * len(batch))
            rows += [r for (r,) in self._db.execute(f"SELECT row FROM chunks WHERE doc_id IN ({marks})", batch)]
            self._db.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", batch)
        self._db.commit()
        return rows

    def document_hashes(self) -> dict[str, str]:
        """doc_id -> content hash recorded at ingestion (empty string when none was recorded)."""
        return {d: h or "" for d, h in self._db.execute(
            "SELECT doc_id, json_extract(metadata, '$.content_hash') FROM chunks GROUP BY doc_id")}

    def document_ids(self) -> set[str]:
        return {d for (d,) in self._db.execute("SELECT DISTINCT doc_id FROM chunks")}

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

    def iter_rows(self) -> Iterable[tuple[int, Chunk]]:
        for row, cid, doc_id, title, text, meta in self._db.execute(
            "SELECT row, id, doc_id, title, text, metadata FROM chunks ORDER BY row"
        ):
            yield row, Chunk(id=cid, doc_id=doc_id, title=title, text=text, metadata=json.loads(meta))

    def filter_rows(self, filters: Mapping[str, Any]) -> np.ndarray:
        """Row ids whose fields match every filter.

        A filter value is a scalar (equality), a list (any of), or {"prefix": "cs."}. Keys are `id`, `doc_id`,
        `title` or any metadata key (category, language, source, ...).
        """
        clauses, params = [], []
        for key, value in filters.items():
            column = key if key in _COLUMNS else "json_extract(metadata, ?)"
            key_params = [] if key in _COLUMNS else [f'$."{key}"']
            if isinstance(value, Mapping):
                if set(value) != {"prefix"}:
                    raise ValueError(f"filter {key!r}: only {{'prefix': ...}} is supported as a mapping, got {value}")
                clauses.append(f"substr({column}, 1, ?) = ?")
                params += key_params + [len(str(value["prefix"])), str(value["prefix"])]
            elif isinstance(value, list | tuple | set):
                values = list(value)
                clauses.append(f"{column} IN ({','.join('?' * len(values))})")
                params += key_params + values
            else:
                clauses.append(f"{column} = ?")
                params += key_params + [value]
        where = " AND ".join(clauses) or "1"
        rows = [r for (r,) in self._db.execute(f"SELECT row FROM chunks WHERE {where} ORDER BY row", params)]
        return np.asarray(rows, dtype=np.int64)


def _batches(items: list, size: int = 900) -> Iterable[list]:
    """SQLite caps bound parameters; keep IN lists under the limit."""
    for start in range(0, len(items), size):
        yield items[start:start + size]
