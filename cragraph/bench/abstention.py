"""Choose the answer's abstention thresholds by `Truth` from one `cragraph eval qa` run that never abstained.

Why offline: whether a question is answered depends on three numbers the run records for every answered question
(`best_evidence`, the best evidence sentence's evaluator score; the reader's `margin` over its no-answer score;
`answer_grade`, the CRAG grade of the passage the answer cites), so one run with every answer gate at its floor
(`answer_min_score=-1.01`, `answer_min_margin=-100`, `answer_min_grade=-1.01`) gives every threshold triple's
outcome without re-running the graph. A triple (min_score, min_margin, min_grade) turns an answered record into an
abstention when one of its numbers is under its threshold (an ungraded answer, as in plain retrieval, is not gated
by grade; a rule's answer has no margin); questions the graph itself abstained on (no context, CRAG's verdict) stay
abstentions. Run it on training questions only.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import product
from pathlib import Path
from typing import Any

from cragraph.bench.qa_metrics import score_record
from cragraph.bench.reader_examples import unseen_by_reader

MIN_SCORES = (-1.0, -0.6, -0.4, -0.2, 0.0, 0.2, 0.4)
MIN_MARGINS = (-100.0, 0.0, 2.0, 4.0, 5.0, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 10.0, 12.0)
"""Logits; finer where the training questions' right and wrong answers meet, so the best is not at an edge."""
MIN_GRADES = (-1.01, -0.8, -0.7, -0.6, -0.5, -0.4, -0.3, -0.2, 0.0, 0.3)


def read_records(paths: Iterable[Path], reader_unseen: bool = False) -> list[dict[str, Any]]:
    """Records of results.jsonl files, each tagged with its run folder's name as `set`. With `reader_unseen`,
    only questions the reader never trained on (reader_examples.unseen_by_reader): on its own training questions
    the reader is right more often at a given confidence, which would set the gates too low."""
    records = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            records += [{**json.loads(line), "set": path.parent.name} for line in handle if line.strip()]
    if reader_unseen:
        records = [r for r in records if unseen_by_reader(r["set"], r["id"], list(r.get("gold_ids") or []))]
    return records


def without_margin(records: Sequence[dict[str, Any]]) -> list[str]:
    """Sets whose answered reader records carry no `margin`: runs made before it was recorded, which the margin
    gate would silently pass."""
    return sorted({r["set"] for r in records if not r.get("abstained") and r.get("confidence") is not None
                   and "margin" not in r})


def kept(record: dict[str, Any], min_score: float, min_margin: float, min_grade: float = -1.01) -> dict[str, Any]:
    """The record as the answer node would have left it under these thresholds."""
    if record.get("abstained"):
        return record
    evidence, margin, grade = record.get("best_evidence"), record.get("margin"), record.get("answer_grade")
    if ((evidence is not None and evidence < min_score) or (margin is not None and margin < min_margin)
            or (grade is not None and grade < min_grade)):
        return {**record, "abstained": True, "answer": ""}
    return record


def truth_grid(
    records: Sequence[dict[str, Any]],
    mode: str,
    min_scores: Sequence[float] = MIN_SCORES,
    min_margins: Sequence[float] = MIN_MARGINS,
    min_grades: Sequence[float] = MIN_GRADES,
) -> list[dict[str, Any]]:
    """Mean Truth of `mode` per (set, thresholds), and its mean over the sets, best first."""
    rows = []
    own = [r for r in records if r["mode"] == mode]
    sets = sorted({r["set"] for r in own})
    for min_score, min_margin, min_grade in product(min_scores, min_margins, min_grades):
        per_set: dict[str, list[float]] = defaultdict(list)
        for record in own:
            per_set[record["set"]].append(score_record(kept(record, min_score, min_margin, min_grade))["Truth"])
        truths = {name: sum(per_set[name]) / len(per_set[name]) for name in sets}
        rows.append(
            {
                "min_score": min_score,
                "min_margin": min_margin,
                "min_grade": min_grade,
                "mean": round(sum(truths.values()) / len(truths), 4) if truths else 0.0,
                **{name: round(value, 4) for name, value in truths.items()},
            }
        )
    return sorted(rows, key=lambda row: -row["mean"])
