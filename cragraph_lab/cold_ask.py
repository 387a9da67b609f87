"""Cold `cragraph ask` wall time, two or more checkouts side by side: `python -m cragraph_lab bench cold-ask`.

    python -m cragraph_lab bench cold-ask --checkout /tmp/main --checkout . --index .cragraph/sample --runs 5

Each run is a fresh `python -m cragraph ask QUESTION --index INDEX --no-web` process started in a checkout (so the
checkout's own packages are imported), with this interpreter and its libraries; every checkout gets one warm-up
run (the OS file cache, a compiled-model cache on first use) and then the checkouts take turns, the order
alternating, so load from other processes hits them alike. Reports each run, the median per checkout, and what
each printed on stderr (a weight-loading bar would show there).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

QUESTION = "Who founded the Radium Institute?"
_CLEARED = ("PYTHONPATH", "CRAGRAPH_EMBED_BACKEND")


def ask_once(checkout: Path, index: Path, question: str) -> tuple[float, str, str]:
    """Seconds, stdout and stderr of one cold ask in `checkout`."""
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "cragraph", "ask", question, "--index", str(index), "--no-web"],
                          cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"cragraph ask failed in {checkout}: {done.stderr.strip()[-500:]}")
    return took, done.stdout, done.stderr


def measure(checkouts: Sequence[Path], index: Path, runs: int = 5, question: str = QUESTION,
            report: Any = print) -> dict[str, Any]:
    if runs < 1:
        raise ValueError("runs must be at least 1")
    names = [str(c) for c in checkouts]
    times: dict[str, list[float]] = {n: [] for n in names}
    stderr: dict[str, str] = {}
    for checkout, name in zip(checkouts, names, strict=True):
        took, out, err = ask_once(checkout, index, question)
        stderr[name] = err.strip()
        report(f"warm-up {name}: {took:.1f} s, answer: {out.strip().splitlines()[0] if out.strip() else ''!r}")
    for run in range(runs):
        order = list(zip(checkouts, names, strict=True))
        for checkout, name in order if run % 2 == 0 else reversed(order):
            took, _, err = ask_once(checkout, index, question)
            times[name].append(round(took, 2))
            stderr[name] = stderr[name] or err.strip()
            report(f"run {run + 1} {name}: {took:.2f} s")
    return {"question": question, "index": str(index), "runs": runs,
            "checkouts": {n: {"seconds": times[n], "median": statistics.median(times[n]), "stderr": stderr[n]}
                          for n in names}}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| checkout | median s | runs (s) | stderr |", "|---|---|---|---|"]
    for name, row in result["checkouts"].items():
        err = " ".join(row["stderr"].split())[:80] or "(empty)"
        lines.append(f"| {name} | {row['median']:.2f} | {', '.join(f'{s:.2f}' for s in row['seconds'])} | {err} |")
    return "\n".join(lines)


def resolve(paths: Sequence[str]) -> list[Path]:
    checkouts = [Path(p).resolve() for p in paths]
    for checkout in checkouts:
        if not (checkout / "cragraph" / "__main__.py").is_file():
            raise FileNotFoundError(f"{checkout} is not a cragraph checkout (no cragraph/__main__.py)")
    return checkouts
