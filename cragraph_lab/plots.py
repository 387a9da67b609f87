"""PNG plots of a QA run (matplotlib, Agg backend: no display needed): recall@k per mode, latency by stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cragraph_lab.extra import bench_import

bench_import("matplotlib").use("Agg")
plt = bench_import("matplotlib.pyplot")  # after use(): the backend must be chosen before pyplot is imported


def recall_plot(summary: dict[str, dict[str, Any]], path: Path, title: str = "") -> Path:
    """Mean recall@k (k = 1..10) of the documents each mode ranked, one line per mode."""
    figure, axes = plt.subplots(figsize=(7, 4.5))
    styles = ("-", "--", "-.", ":")
    markers = ("o", "s", "^", "D", "v", "x")
    for index, (mode, result) in enumerate(summary.items()):
        curve = result.get("recall_curve") or []
        if curve:  # line style and marker vary so modes with identical rankings stay visible
            axes.plot(range(1, len(curve) + 1), curve, linestyle=styles[index % len(styles)],
                      marker=markers[index % len(markers)], markersize=4, label=mode)
    axes.set_xlabel("k (documents)")
    axes.set_ylabel("recall@k")
    axes.set_ylim(0, 1.02)
    axes.set_title(f"{title}: recall@k per mode" if title else "recall@k per mode")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return _save(figure, path)


def latency_plot(summary: dict[str, dict[str, Any]], path: Path, title: str = "") -> Path:
    """Stacked median milliseconds per stage, one bar per mode (stages that ran for only some questions
    count with their median over the questions they ran for)."""
    modes = list(summary)
    stages = list(dict.fromkeys(s for result in summary.values() for s in result.get("stages", {})))
    figure, axes = plt.subplots(figsize=(max(6, 1.3 * len(modes) + 3), 4.5))
    bottoms = [0.0] * len(modes)
    colours = plt.get_cmap("tab20")
    for index, stage in enumerate(stages):
        heights = [summary[m].get("stages", {}).get(stage, {}).get("p50_ms", 0.0) for m in modes]
        axes.bar(modes, heights, bottom=bottoms, label=stage, color=colours(index % 20))
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    axes.set_ylabel("median ms per question")
    axes.set_title(f"{title}: latency by stage" if title else "latency by stage")
    axes.tick_params(axis="x", labelrotation=30, labelsize=8)
    axes.legend(fontsize=7, ncol=2)
    return _save(figure, path)


def _save(figure: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
