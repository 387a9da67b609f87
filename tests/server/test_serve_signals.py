"""`cragraph serve` ends its `langgraph dev` child when it is told to stop: SIGTERM to the parent, and SIGINT to
the parent alone even where SIGINT starts ignored (a shell's background job)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.fixtures.graph import build_tiny_index
from tests.fixtures.server import free_port

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]


def children(pid: int) -> list[int]:
    with contextlib.suppress(FileNotFoundError):
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stopping_the_parent_stops_the_server(stop, tmp_path, tiny_embedder_dir) -> None:
    index = build_tiny_index(tmp_path, tiny_embedder_dir)
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with open(tmp_path / "serve.log", "w+b") as log:
        parent = subprocess.Popen([sys.executable, "-m", "cragraph", "serve", "--port", str(port), "--index",
                                   str(index)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  preexec_fn=ignore_sigint if stop == signal.SIGINT else None)
        server: list[int] = []
        try:
            deadline = time.monotonic() + 120
            while True:
                assert parent.poll() is None, log.seek(0) or log.read().decode()[-2000:]
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/ok", timeout=2).status_code == 200:
                        break
                assert time.monotonic() < deadline, "the server did not come up"
                time.sleep(0.5)
            server = children(parent.pid)
            assert server, "cragraph serve runs langgraph dev as its child"

            parent.send_signal(stop)
            parent.wait(timeout=40)
            deadline = time.monotonic() + 10
            while any(alive(pid) for pid in server) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not any(alive(pid) for pid in server), "langgraph dev outlived cragraph serve"
            with pytest.raises(httpx.HTTPError):
                httpx.get(f"http://127.0.0.1:{port}/ok", timeout=2)
        finally:
            for pid in server:  # a failed run leaves nothing behind
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if parent.poll() is None:
                parent.kill()
                parent.wait()
