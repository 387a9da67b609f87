"""Cold `cragraph ask` wall time and peak memory, checkouts side by side: `python -m cragraph_lab bench cold-ask`.

    python -m cragraph_lab bench cold-ask --checkout /tmp/main --checkout . --index .cragraph/sample --runs 5

Each run is a fresh `python -m cragraph ask QUESTION --index INDEX --no-web` process started in a checkout (so the
checkout's own packages are imported), with this interpreter and its libraries; every checkout gets one warm-up
run (the OS file cache, a compiled-model cache on first use) and then the checkouts take turns, the order
alternating, so load from other processes hits them alike. Reports each run, the median wall time and peak
resident memory (the process's own maximum RSS, from wait4) per checkout, and what each printed on stderr (a
weight-loading bar would show there).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

QUESTION = "Who founded the Radium Institute?"
_CLEARED = ("PYTHONPATH", "CRAGRAPH_EMBED_BACKEND")


def ask_once(checkout: Path, index: Path, question: str) -> tuple[float, str, str, float]:
    """Seconds, stdout, stderr and peak resident memory (MB) of one cold ask in `checkout`."""
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([sys.executable, "-m", "cragraph", "ask", question, "--index", str(index),
                                    "--no-web"], cwd=checkout, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)  # the child's own rusage: its peak RSS, in KB on Linux
        process.returncode = os.waitstatus_to_exitcode(status)
        took = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise RuntimeError(f"cragraph ask failed in {checkout}: {stderr.strip()[-500:]}")
    return took, stdout, stderr, usage.ru_maxrss / 1024


def measure(checkouts: Sequence[Path], index: Path, runs: int = 5, question: str = QUESTION,
            report: Any = print) -> dict[str, Any]:
    if runs < 1:
        raise ValueError("runs must be at least 1")
    names = [str(c) for c in checkouts]
    times: dict[str, list[float]] = {n: [] for n in names}
    peaks: dict[str, list[float]] = {n: [] for n in names}
    stderr: dict[str, str] = {}
    for checkout, name in zip(checkouts, names, strict=True):
        took, out, err, _ = ask_once(checkout, index, question)
        stderr[name] = err.strip()
        report(f"warm-up {name}: {took:.1f} s, answer: {out.strip().splitlines()[0] if out.strip() else ''!r}")
    for run in range(runs):
        order = list(zip(checkouts, names, strict=True))
        for checkout, name in order if run % 2 == 0 else reversed(order):
            took, _, err, peak = ask_once(checkout, index, question)
            times[name].append(round(took, 2))
            peaks[name].append(round(peak))
            stderr[name] = stderr[name] or err.strip()
            report(f"run {run + 1} {name}: {took:.2f} s, {peak:.0f} MB")
    return {"question": question, "index": str(index), "runs": runs,
            "checkouts": {n: {"seconds": times[n], "median": statistics.median(times[n]), "peak_mb": peaks[n],
                              "median_peak_mb": statistics.median(peaks[n]), "stderr": stderr[n]}
                          for n in names}}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| checkout | median s | median peak MB | runs (s) | stderr |", "|---|---|---|---|---|"]
    for name, row in result["checkouts"].items():
        err = " ".join(row["stderr"].split())[:80] or "(empty)"
        lines.append(f"| {name} | {row['median']:.2f} | {row['median_peak_mb']:.0f} | "
                     f"{', '.join(f'{s:.2f}' for s in row['seconds'])} | {err} |")
    return "\n".join(lines)


def resolve(paths: Sequence[str]) -> list[Path]:
    checkouts = [Path(p).resolve() for p in paths]
    for checkout in checkouts:
        if not (checkout / "cragraph" / "__main__.py").is_file():
            raise FileNotFoundError(f"{checkout} is not a cragraph checkout (no cragraph/__main__.py)")
    return checkouts
