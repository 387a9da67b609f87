"""Per-stage latency of the agent: `python -m cragraph.bench.ask_latency --index DIR --file QUESTIONS`.

Runs every question through the compiled graph in one process (after one warm-up question that loads the
models) and prints the median and p95 of each node's `duration_ms` from the trace, plus the total per question.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from pathlib import Path

from cragraph.bench.metrics import percentile


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--file", type=Path, required=True, help="questions, one per line (# comments)")
    parser.add_argument("--web", action="store_true", help="allow web search (off by default)")
    args = parser.parse_args(argv)

    from cragraph.context import Context
    from graph import graph

    questions = [q.strip() for q in args.file.read_text(encoding="utf-8").splitlines()
                 if q.strip() and not q.lstrip().startswith("#")]
    context = Context(index=args.index, web_search=args.web)
    graph.invoke({"question": questions[0]}, context=context)  # warm-up: loads the index and the models
    stages: dict[str, list[float]] = defaultdict(list)
    totals = []
    for question in questions:
        trace = graph.invoke({"question": question}, context=context)["trace"]
        per_node: dict[str, float] = defaultdict(float)
        for record in trace:
            per_node[record["node"]] += record["duration_ms"]
        for node, ms in per_node.items():
            stages[node].append(ms)
        totals.append(sum(per_node.values()))
    print(f"{len(questions)} questions, warm process, index {args.index}\n")
    print("| stage | runs | p50_ms | p95_ms |\n|---|---|---|---|")
    for node, values in stages.items():
        print(f"| {node} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} |")
    print(f"| total | {len(totals)} | {percentile(totals, 50):.1f} | {percentile(totals, 95):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
