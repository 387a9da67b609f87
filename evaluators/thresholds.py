"""CRAG thresholds: suggest (upper, lower) from labelled runs, and store / read them per index.

CRAG's grade depends only on a list's best score: `correct` if it is above `upper`, `incorrect` if below
`lower`. So thresholds are fitted on each question's best score against the truth of its list (a gold passage
was retrieved, or not). `upper` is the lowest value above which at least `precision` of lists really hold a
gold passage; `lower` the highest value (not above `upper`) below which at least `precision` of lists really
hold none. Between them CRAG says `ambiguous` and hedges (refine + web).

Thresholds measured for an index live beside it, in `<bundle>/evaluator_thresholds.json`, keyed by evaluator
spec, so the graph can use the values calibrated for that corpus: `load_thresholds(bundle.path, "embedded")`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

THRESHOLDS_FILE = "evaluator_thresholds.json"
DEFAULT_PRECISION = 0.9


@dataclass(frozen=True)
class Thresholds:
    upper: float
    lower: float


@dataclass
class DecisionReport:
    """How CRAG decisions with given thresholds match the truth (ambiguous never counts as a match)."""

    accuracy: float
    decisive_accuracy: float  # among lists graded correct or incorrect
    ambiguous_rate: float
    counts: dict[str, int]


def verdicts(best_scores: Sequence[float], thresholds: Thresholds) -> list[str]:
    """The CRAG grade of each list from its best score (an empty list has best score -inf)."""
    return ["correct" if s > thresholds.upper else "incorrect" if s < thresholds.lower else "ambiguous"
            for s in best_scores]


def decision_report(best_scores: Sequence[float], truth_correct: Sequence[bool],
                    thresholds: Thresholds) -> DecisionReport:
    graded = verdicts(best_scores, thresholds)
    truth = ["correct" if t else "incorrect" for t in truth_correct]
    n = max(len(graded), 1)
    decisive = [(g, t) for g, t in zip(graded, truth, strict=True) if g != "ambiguous"]
    counts = {name: graded.count(name) for name in ("correct", "ambiguous", "incorrect")}
    return DecisionReport(
        accuracy=sum(g == t for g, t in zip(graded, truth, strict=True)) / n,
        decisive_accuracy=sum(g == t for g, t in decisive) / len(decisive) if decisive else float("nan"),
        ambiguous_rate=counts["ambiguous"] / n, counts=counts)


def suggest_thresholds(best_scores: Sequence[float], truth_correct: Sequence[bool],
                       precision: float = DEFAULT_PRECISION) -> Thresholds:
    """(upper, lower) meeting `precision` on each side where possible (see the module docstring).

    When no cut reaches the precision on a side, that side falls back to the single cut with the best
    accuracy, so the suggestion is always usable.
    """
    scores = np.asarray(best_scores, dtype=np.float64)
    truth = np.asarray(truth_correct, dtype=bool)
    if not len(scores):
        raise ValueError("no lists to fit thresholds on")
    values = np.unique(np.clip(scores, -1.0, 1.0))
    cuts = np.concatenate([[-1.0], (values[:-1] + values[1:]) / 2, [1.0]])
    best_single = max(cuts, key=lambda c: (np.mean((scores > c) == truth), -abs(c)))
    upper = next((c for c in cuts if (scores > c).any() and truth[scores > c].mean() >= precision), None)
    upper = float(best_single if upper is None else upper)
    lower_candidates = [c for c in cuts if c <= upper and (scores < c).any()
                        and (~truth[scores < c]).mean() >= precision]
    lower = float(max(lower_candidates) if lower_candidates else min(best_single, upper))
    return Thresholds(upper=round(upper, 4), lower=round(min(lower, upper), 4))


def save_thresholds(index_dir: str | Path, evaluator: str, thresholds: Thresholds,
                    details: dict[str, Any] | None = None) -> Path:
    """Record thresholds for `evaluator` in the index folder (other evaluators' entries are kept)."""
    folder = Path(index_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"no index folder at {folder}")
    path = folder / THRESHOLDS_FILE
    stored = _read(path)
    stored[evaluator] = {**asdict(thresholds), **(details or {}),
                         "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    tmp = path.with_name(f".{THRESHOLDS_FILE}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(stored, indent=2, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path


def load_thresholds(index_dir: str | Path, evaluator: str = "embedded") -> Thresholds | None:
    """Thresholds stored for `evaluator` in the index folder, or None when none were stored."""
    entry = _read(Path(index_dir) / THRESHOLDS_FILE).get(evaluator)
    if not entry:
        return None
    return Thresholds(upper=float(entry["upper"]), lower=float(entry["lower"]))


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON ({error}); delete it or re-run "
                         "`python -m cragraph_lab eval evaluator`") from error
    return data if isinstance(data, dict) else {}
