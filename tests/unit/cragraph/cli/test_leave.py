"""The process's end after an ask: exit handlers run, buffered output reaches the reader, the code is kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]


def test_a_quick_end_runs_exit_handlers_flushes_and_keeps_the_code(tmp_path: Path) -> None:
    code = ("import atexit, sys\n"
            "from cragraph.cli.leave import end_quickly, leave\n"
            "atexit.register(lambda: open(sys.argv[1], 'w').write('ran'))\n"
            "print('an answer', end='')\n"
            "end_quickly()\n"
            "leave(3)\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "mark")], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout) == (3, "an answer")
    assert (tmp_path / "mark").read_text() == "ran"


def test_an_ask_without_its_index_still_says_so_and_fails(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "cragraph", "ask", "Who?", "--index", str(tmp_path / "none")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "no index at" in done.stderr and "cragraph index" in done.stderr
