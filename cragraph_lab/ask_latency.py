"""Per-stage latency of the agent: `python -m cragraph_lab bench ask-latency --index DIR --file QUESTIONS`.

Runs every question through the compiled graph in one process (after one warm-up question that loads the
models) and reports the median and p95 of each node's `duration_ms` from the trace, plus the total per question.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cragraph.evaluation.metrics import percentile


@dataclass
class StageLatencies:
    """Milliseconds per question: per graph node (summed over its runs in one question) and in total."""

    questions: int
    index: str
    stages: dict[str, list[float]] = field(default_factory=dict)
    totals: list[float] = field(default_factory=list)


def read_questions(path: Path) -> list[str]:
    """Questions, one per line; blank lines and lines starting with # are skipped."""
    return [q.strip() for q in path.read_text(encoding="utf-8").splitlines()
            if q.strip() and not q.lstrip().startswith("#")]


def measure_stage_latencies(index: str, questions: Sequence[str], web: bool = False) -> StageLatencies:
    """Run every question through the graph in this process (after one warm-up) and collect the trace timings."""
    from graph import graph
    from rag.context import Context

    if not questions:
        raise ValueError("no questions to time")
    context = Context(index=index, web_search=web)
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
    return StageLatencies(questions=len(questions), index=index, stages=dict(stages), totals=totals)


def latency_report(result: StageLatencies) -> str:
    """The header line and the Markdown table of p50 / p95 per stage and in total."""
    lines = [f"{result.questions} questions, warm process, index {result.index}", "",
             "| stage | runs | p50_ms | p95_ms |", "|---|---|---|---|"]
    for node, values in result.stages.items():
        lines.append(f"| {node} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} |")
    lines.append(f"| total | {len(result.totals)} | {percentile(result.totals, 50):.1f} | "
                 f"{percentile(result.totals, 95):.1f} |")
    return "\n".join(lines)
