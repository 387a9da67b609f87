"""The models a cold `cragraph ask` reads, opened on a second thread while the first imports the graph.

Why: most of opening them (building the word-piece trie, compiling the OpenVINO graphs of the embedder and the
reader, reading the language identifier's arrays) runs outside Python's global lock, while the first thread's
imports hold it; on a machine with two cores the opening then costs the ask little. The run calls the same
process-wide loaders, which hand it what this thread opened, or wait for it to finish. Whatever fails here is
left for the run to meet and report: this thread only logs it.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

log = logging.getLogger(__name__)


def warm_in_background(index: str | Path) -> threading.Thread:
    """Start opening, on a daemon thread, the embedder the bundle at `index` was built with, the reader and the
    language identifier."""
    thread = threading.Thread(target=_warm, args=(Path(index),), name="cragraph-warm", daemon=True)
    thread.start()
    return thread


def _warm(index: Path) -> None:
    steps = (("embedder", lambda: _embedder(index)), ("reader", _reader), ("language identifier", _languages))
    for name, step in steps:
        try:
            step()
        except Exception as error:  # noqa: BLE001 - the run opens it again and reports what goes wrong
            log.debug("warming the %s failed: %s", name, error)


def _embedder(index: Path) -> None:
    from models.embedder import load_embedder
    from stores.bundle import embedder_of

    runner = getattr(load_embedder(embedder_of(index)), "runner", None)
    if runner is not None:
        runner.session  # noqa: B018 - compiles the graph on first read


def _reader() -> None:
    from rag.reader.cache import load_reader

    load_reader()


def _languages() -> None:
    from stores.text import language_identifier

    language_identifier()
