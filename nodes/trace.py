"""One trace record per node run: what it decided, how many items it saw, its best scores, its duration."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any


class StageTimer:
    """Started when a node begins; `record` turns it into the node's trace entry."""

    def __init__(self, node: str):
        self.node = node
        self.started = time.perf_counter()

    def record(
        self,
        decision: str,
        counts: dict[str, int] | None = None,
        top_scores: Iterable[float] = (),
        note: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "node": self.node,
            "decision": decision,
            "counts": dict(counts or {}),
            "top_scores": [round(float(s), 4) for s in sorted(top_scores, reverse=True)[:3]],
            "duration_ms": round((time.perf_counter() - self.started) * 1000.0, 1),
        }
        if note:
            entry["note"] = note
        entry.update(extra)
        return entry


def format_trace(trace: list[dict[str, Any]]) -> str:
    """The trace as a Markdown table (for `cragraph ask --trace` and the README)."""
    lines = ["| # | node | decision | counts | top scores | ms | note |", "|---|---|---|---|---|---|---|"]
    for i, entry in enumerate(trace, start=1):
        counts = ", ".join(f"{k}={v}" for k, v in entry.get("counts", {}).items())
        scores = ", ".join(f"{s:.2f}" for s in entry.get("top_scores", []))
        note = str(entry.get("note", "")).replace("|", "/")
        lines.append(
            f"| {i} | {entry['node']} | {entry['decision']} | {counts} | {scores} | "
            f"{entry.get('duration_ms', 0):.0f} | {note} |"
        )
    return "\n".join(lines)
