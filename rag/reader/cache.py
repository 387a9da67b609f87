"""The process-wide reader per weights folder, loaded on first use (torch is imported only then)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag.reader.reader import Reader

_readers: dict[str, Reader] = {}
_lock = threading.Lock()


def load_reader(path: str | Path = "") -> Reader:
    """The reader for a weights folder ("" = the packaged weights); loaded once per process, thread-safe."""
    from rag.reader.reader import DEFAULT_WEIGHTS, Reader

    folder = Path(path).expanduser() if str(path) else DEFAULT_WEIGHTS
    key = str(folder.resolve())
    with _lock:
        reader = _readers.get(key)
        if reader is None:
            reader = _readers[key] = Reader.load(folder)
        return reader

