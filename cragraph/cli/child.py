"""A child process that ends with its parent: `cragraph serve` runs `langgraph dev` through it.

The child gets its own process group, and SIGINT, SIGTERM and SIGHUP to the parent are passed on to that whole
group, so `kill -TERM` of the parent (or SIGINT to it alone, which a shell's background job ignores by default)
stops the server and anything it started instead of leaving it listening. A child that has not ended
`grace_s` seconds after the signal is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run_child(command: Sequence[str], cwd: Path, env: Mapping[str, str], grace_s: float = 20.0) -> int:
    """Run `command` to its end and return its exit status; the parent's stop signals stop it too."""
    process = subprocess.Popen(list(command), cwd=cwd, env=dict(env), start_new_session=True)
    asked: list[float] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        asked.append(time.monotonic())
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                return process.wait(timeout=0.5)
            if asked and time.monotonic() - asked[0] > grace_s:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                return process.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if process.poll() is None:  # the parent is leaving for another reason (an exception): take the child along
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
