"""How the `cragraph` process ends: after a command that only reads (ask), without tearing its objects down.

Why: Python's teardown frees the loaded models object by object (OpenVINO's compiled graphs, then trimming the
heap, spaCy's vocabulary, the word-piece trie), a tenth of a cold `cragraph ask`, and the operating system takes
the memory back at once anyway. Exit handlers still run (logging's flush, executors' joins) and the standard
streams are flushed. A command that writes files (index, eval folder) ends the ordinary way, so every file it
opened is closed by Python.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import NoReturn

_quick = False


def end_quickly() -> None:
    """Mark the running command as one that leaves nothing to write when it returns."""
    global _quick
    _quick = True


def leave(code: int) -> NoReturn:
    """End the process with `code`."""
    if not _quick:
        raise SystemExit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can reach the reader
            stream.flush()
    os._exit(code)
