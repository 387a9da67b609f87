"""The process-wide reader per weights folder and runtime, loaded on first use."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag.reader.reader import Reader

_readers: dict[str, Reader] = {}
_lock = threading.Lock()


def load_reader(path: str | Path = "", backend: str | None = None) -> Reader:
    """The reader for a weights folder ("" = the packaged weights) on a backend (None: $CRAGRAPH_READER_BACKEND,
    else openvino; the lab's training asks for "torch"); loaded once per process and backend, thread-safe."""
    from rag.reader.graph import reader_backend
    from rag.reader.reader import DEFAULT_WEIGHTS, Reader

    folder = Path(path).expanduser() if str(path) else DEFAULT_WEIGHTS
    chosen = reader_backend(backend)
    key = f"{folder.resolve()}|{chosen}"
    with _lock:
        reader = _readers.get(key)
        if reader is None:
            reader = _readers[key] = Reader.load(folder, backend=chosen)
        return reader

