"""The process-wide reader per weights folder and runtime, loaded on first use."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag.reader.reader import Reader

_readers: dict[str, Reader] = {}
_lock = threading.Lock()


def load_reader(path: str | Path = "", torch: bool = False) -> Reader:
    """The reader for a weights folder ("" = the packaged weights), on the embedder's runtime or (`torch`, as the
    lab's training reads it) on torch; loaded once per process, thread-safe."""
    from rag.reader.reader import DEFAULT_WEIGHTS, Reader

    folder = Path(path).expanduser() if str(path) else DEFAULT_WEIGHTS
    key = f"{folder.resolve()}|{torch}"
    with _lock:
        reader = _readers.get(key)
        if reader is None:
            reader = _readers[key] = Reader.load(folder, torch=torch)
        return reader

