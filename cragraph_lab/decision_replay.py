"""`python -m cragraph_lab bench decision-replay`: a run's recorded candidates decided again with a decision's weights,
paired against another run of the same questions.

Why: the readings do not depend on the decision, so a run's answers under new weights follow from the candidates
it recorded (the answer node does exactly this: choose, then answer or abstain at `answer_threshold`). Weights
refitted after a benchmark run started are measured without running the graph again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cragraph.evaluation.qa_metrics import score_record
from cragraph_lab.paired import paired_difference
from rag.answering.candidates import Candidate
from rag.answering.decision import DecisionModel, answers, choose
from rag.reader.types import ReaderAnswer

METRICS = ("EM", "F1", "Truth", "Halluc", "Abstain")


def read_records(path: Path, mode: str = "crag-multihop") -> dict[str, dict[str, Any]]:
    """The run's records of `mode`, by question id."""
    records = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {r["id"]: r for r in records if r.get("mode", mode) == mode}


def redecided(record: dict[str, Any], model: DecisionModel, threshold: float) -> dict[str, Any]:
    """The record with the answer the weights choose from its candidates (unchanged when it has none)."""
    recorded = record.get("candidates") or []
    if not recorded:
        return record
    candidates = []
    for c in recorded:
        read = ReaderAnswer(c["answer"], "span", 0, "", 0, 0, 0.0)
        candidates.append(Candidate(read, c["reading"], {"id": c.get("passage_id")}, features=c["features"]))
    chosen = choose(candidates, model)
    answered = answers(chosen, threshold)
    return {**record, "answer": chosen.text if answered else "", "abstained": not answered}


def replay(new: Path, old: Path, model: DecisionModel, threshold: float = 0.5) -> list[dict[str, Any]]:
    """Per metric: the old run's mean, the new run's re-decided mean, and their paired difference."""
    ours, theirs = read_records(new), read_records(old)
    shared = [key for key in ours if key in theirs]
    new_scores = [score_record(redecided(ours[key], model, threshold)) for key in shared]
    old_scores = [score_record(theirs[key]) for key in shared]
    rows = []
    for metric in METRICS:
        a = [float(s[metric] or 0.0) for s in new_scores]
        b = [float(s[metric] or 0.0) for s in old_scores]
        difference = paired_difference(a, b)
        rows.append({"metric": metric, "questions": len(shared), "old": sum(b) / len(b), "new": sum(a) / len(a),
                     "difference": [difference.mean, difference.low, difference.high]})
    return rows


def markdown(name: str, rows: Sequence[dict[str, Any]]) -> str:
    return "\n".join(
        f"| {name} | {r['metric']} | {r['old']:.3f} | {r['new']:.3f} | {r['difference'][0]:+.3f} "
        f"[{r['difference'][1]:+.3f}, {r['difference'][2]:+.3f}] |" for r in rows)
