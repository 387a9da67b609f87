"""Concurrent runs on the server, measured (issue 14): `langgraph dev` (what `cragraph serve` starts) over loopback.

Starts the server on a free port over the sample index with the packaged models (the real stack a user gets),
answers each sample question once, serially, then sends `--runs` runs at once (the sample questions in turn,
each on its own thread) through langgraph-sdk, bounded by `--timeout` seconds per run. Reports errors, p50 /
p95 latency of the concurrent runs, the server's memory (RSS of its process group) before and after, and how
many concurrent answers differ from the serial answer to the same question (shared model, index and embedding
caches under threads must not change an answer).

Run:  .venv/bin/python tests/reliability/server_load.py --runs 50 [--index .cragraph/sample] [--json out.json]
(`make demo` builds .cragraph/sample.) Exit status 0 only with no error, no timeout and no changed answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cragraph.cli.agent import server_env  # noqa: E402
from tests.fixtures.server import langgraph_dev  # noqa: E402

QUESTIONS = ROOT / "samples" / "questions.txt"
STARTUP_S = 300


def group_rss_mb(pgid: int) -> float:
    """Resident memory of every process in the server's process group (langgraph dev and its workers)."""
    out = subprocess.run(["ps", "-o", "rss=", "-g", str(pgid)], capture_output=True, text=True).stdout
    return sum(int(v) for v in out.split()) / 1024


def questions() -> list[str]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


async def ask(client, assistant_id: str, question: str, timeout: float) -> tuple[float, str | None, str]:
    """(seconds, error or None, answer) of one run on a fresh thread."""
    start = time.perf_counter()
    try:
        thread = await client.threads.create()
        result = await asyncio.wait_for(
            client.runs.wait(thread["thread_id"], assistant_id, input={"question": question}), timeout
        )
    except Exception as error:  # the measurement counts every failure, whatever its kind
        return time.perf_counter() - start, f"{type(error).__name__}: {str(error)[:200]}", ""
    elapsed = time.perf_counter() - start
    if not isinstance(result, dict) or "answer" not in result:
        return elapsed, f"no answer in the run's output: {str(result)[:200]}", ""
    return elapsed, None, result["answer"]


async def drive(url: str, runs: int, timeout: float, pgid: int) -> dict:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    asked = questions()
    serial = {}
    for question in asked:  # warms every model and cache, and gives the reference answers
        _, error, answer = await ask(client, assistant_id, question, timeout)
        if error:
            raise SystemExit(f"the serial run of {question!r} failed: {error}")
        serial[question] = answer
    rss_before = group_rss_mb(pgid)
    batch = [asked[i % len(asked)] for i in range(runs)]
    start = time.perf_counter()
    results = await asyncio.gather(*(ask(client, assistant_id, q, timeout) for q in batch))
    wall = time.perf_counter() - start
    latencies = sorted(seconds for seconds, error, _ in results if error is None)
    errors = [error for _, error, _ in results if error]
    changed = [q for q, (_, error, answer) in zip(batch, results, strict=True) if not error and answer != serial[q]]
    return {
        "runs": runs,
        "errors": len(errors),
        "error_samples": errors[:3],
        "changed_answers": len(changed),
        "wall_s": round(wall, 1),
        "p50_s": round(statistics.median(latencies), 2) if latencies else None,
        "p95_s": round(latencies[max(0, int(0.95 * len(latencies)) - 1)], 2) if latencies else None,
        "rss_mb_before": round(rss_before, 1),
        "rss_mb_after": round(group_rss_mb(pgid), 1),
        "distinct_questions": len(asked),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--index", type=Path, default=ROOT / ".cragraph" / "sample")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds one run may take")
    parser.add_argument("--json", type=Path, help="write the summary here too")
    args = parser.parse_args()
    if not args.index.is_dir():
        raise SystemExit(f"no index at {args.index}: run `make demo` first (it builds .cragraph/sample)")
    env = {**server_env(str(args.index)), "CRAGRAPH_WEB_SEARCH": "false", "OMP_NUM_THREADS": "1"}
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / "cragraph-server-load.log"
    with langgraph_dev(env, log_path, startup_s=STARTUP_S) as (url, pgid):
        summary = asyncio.run(drive(url, args.runs, args.timeout, pgid))
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0 if not summary["errors"] and not summary["changed_answers"] else 1


if __name__ == "__main__":
    sys.exit(main())
