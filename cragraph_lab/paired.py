"""Each mode against plain retrieval on the same questions: the paired difference and its bootstrap interval.

Why: the suite's rows often differ by a few questions out of 200 (one question moves EM by .005), and a
difference whose interval straddles zero is neither a win nor a loss. Resampling the questions with one draw for
both modes keeps the pairing: most questions are scored alike by both, so the interval of the difference is far
narrower than two separate intervals would suggest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

PAIRED_METRICS = ("EM", "Contains", "Truth")
BASELINE = "plain"
RESAMPLES = 2000
LEVEL = 0.95
DIFFERENCE_CAPTION = (f"Against plain, paired by question (mean difference, {LEVEL:.0%} bootstrap interval over the "
                      f"questions, {RESAMPLES} resamples; an interval that holds 0 is no difference):")


@dataclass(frozen=True)
class Difference:
    """mean(ours - theirs) over the questions, with its percentile bootstrap interval at LEVEL."""

    mean: float
    low: float
    high: float
    questions: int


def paired_difference(ours: Sequence[float], theirs: Sequence[float], resamples: int = RESAMPLES,
                      seed: int = 0) -> Difference:
    """The difference of two modes' per-question scores (same questions, same order)."""
    if len(ours) != len(theirs):
        raise ValueError(f"paired scores need the same questions: {len(ours)} against {len(theirs)}")
    if not len(ours):
        raise ValueError("no questions to compare")
    deltas = np.asarray(ours, dtype=float) - np.asarray(theirs, dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(deltas), size=(resamples, len(deltas)))
    means = deltas[draws].mean(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Difference(float(deltas.mean()), float(low), float(high), len(deltas))


def against_baseline(records: Sequence[dict[str, Any]], modes: Sequence[str], baseline: str = BASELINE,
                     metrics: Sequence[str] = PAIRED_METRICS) -> dict[str, dict[str, dict[str, float]]]:
    """{mode: {metric: Difference as a dict}} for every mode but the baseline, over the questions both answered.
    Records carry `scores` (qa_metrics.score_record); empty when the baseline did not run."""
    by_mode: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        by_mode.setdefault(record["mode"], {})[record["id"]] = record["scores"]
    base = by_mode.get(baseline)
    if not base:
        return {}
    paired: dict[str, dict[str, dict[str, float]]] = {}
    for mode in modes:
        own = by_mode.get(mode)
        if mode == baseline or not own:
            continue
        shared = [question for question in base if question in own]
        if shared:
            paired[mode] = {
                metric: asdict(paired_difference([own[q][metric] or 0.0 for q in shared],
                                                 [base[q][metric] or 0.0 for q in shared]))
                for metric in metrics
            }
    return paired


def difference_cell(difference: dict[str, float] | None) -> str:
    if not difference:
        return ""
    return f"{difference['mean']:+.3f} [{difference['low']:+.3f}, {difference['high']:+.3f}]"


def difference_table(summary: dict[str, dict[str, Any]], metrics: Sequence[str] = PAIRED_METRICS) -> str:
    """One row per mode with a paired comparison in its summary (`against_plain`); empty when none has."""
    rows = [(mode, result["against_plain"]) for mode, result in summary.items() if result.get("against_plain")]
    if not rows:
        return ""
    lines = ["| mode | " + " | ".join(f"{m} - plain" for m in metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    lines += [f"| {mode} | " + " | ".join(difference_cell(paired.get(m)) for m in metrics) + " |"
              for mode, paired in rows]
    return "\n".join(lines)


def captioned(table: str) -> list[str]:
    """Report lines for a paired table under its caption, after a blank line; none for an empty table."""
    return ["", DIFFERENCE_CAPTION, "", table] if table else []
