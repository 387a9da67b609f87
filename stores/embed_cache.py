"""Passage embeddings cached by content hash, so re-indexing unchanged text costs no model time.

One SQLite file per user cache folder, keyed by (model key, sha256 of the passage text). The model key is the
embedder's name plus a fingerprint of its output on a fixed probe text, so a local model folder retrained in
place (same name, new weights) never gets another model's vectors back.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from models.embedder import Embedder
from models.paths import cache_root

CACHE_FILE = "embeddings.sqlite"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_PROBE = "cragraph embedding cache probe: Кошка сидит на крыше. 猫坐在屋顶上。"


@functools.cache
def model_key(embedder: Embedder) -> str:
    """name@fingerprint, the fingerprint being a hash of the embedder's (rounded) vector for a fixed probe."""
    probe = np.round(embedder.embed_passages([_PROBE])[0], 4)
    return f"{embedder.name}@{hashlib.sha256(probe.tobytes()).hexdigest()[:12]}"


class EmbeddingCache:
    def __init__(self, path: Path | None = None):
        self.path = path or cache_root() / CACHE_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False)
        self._lock = threading.Lock()  # one connection, shared by a server's threads
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, vector BLOB, PRIMARY KEY (model, hash))"
        )

    def lookup(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        with self._lock:
            for start in range(0, len(unique), 900):
                batch = unique[start:start + 900]
                marks = ",".join("?" * len(batch))
                for h, blob in self._db.execute(
                    f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})", [model, *batch]
                ):
                    found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def store(self, model: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        rows = [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in zip(hashes, vectors, strict=True)]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors(model, hash, vector) VALUES (?, ?, ?)", rows)
            self._db.commit()


@functools.cache
def _cache_at(path: Path) -> EmbeddingCache:
    return EmbeddingCache(path)


def shared_cache() -> EmbeddingCache:
    """The process's cache for the current user cache folder, opened once (a query-time caller, such as the
    cross-lingual re-scoring, would otherwise open the SQLite file on every search)."""
    return _cache_at(cache_root() / CACHE_FILE)


def embed_passages_cached(
    embedder: Embedder,
    passages: Sequence[str],
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: bool = True,
) -> np.ndarray:
    """Embed passages, taking what the cache has and embedding (and caching) only the rest."""
    cache = cache or shared_cache()
    hashes = [content_hash(p) for p in passages]
    key = model_key(embedder)
    known = cache.lookup(key, hashes)
    missing = list(dict.fromkeys(h for h in hashes if h not in known))
    text_of = dict(zip(hashes, passages, strict=True))
    with tqdm(total=len(missing), desc="embedding", unit="chunk", disable=not progress or not missing) as bar:
        for start in range(0, len(missing), batch_size):
            batch = missing[start:start + batch_size]
            vectors = embedder.embed_passages([text_of[h] for h in batch], batch_size=batch_size)
            cache.store(key, batch, vectors)
            known.update(zip(batch, vectors, strict=True))
            bar.update(len(batch))
    if not passages:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.stack([known[h] for h in hashes]).astype(np.float32)
