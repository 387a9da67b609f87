"""`python -m cragraph_lab.candidate_signals RUNDIR [--signals margin grade ...]`: how well each recorded signal
tells the pipeline's right span candidates from its wrong ones, per set.

Why: a new signal (a verifier's verdict, a grade) earns a place in the decision only if it separates right from
wrong candidates where the signals it would join do not; this reads the candidates every `eval` run records
(results.jsonl, with their features) and prints the ROC-AUC of each signal per results file, a candidate counted
right when it holds a gold answer. Span readings only (one pass, per passage, along the plan, linked pages): a
rule's yes / no has no span to be right by.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cragraph.evaluation.qa_metrics import contains_answer
from cragraph_lab.evaluator_training import roc_auc

SPAN_READINGS = ("one_pass", "per_passage", "hop_chain", "linked")
DEFAULT_SIGNALS = ("margin", "share", "grade", "cover", "asked_cover")


def signal_aucs(results: Path, signals: Sequence[str]) -> dict[str, float | int | None]:
    """{"candidates", "right", and each signal's ROC-AUC (None where every candidate is right or every one wrong)}."""
    labels: list[int] = []
    values: dict[str, list[float]] = {name: [] for name in signals}
    for line in results.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        golds = record.get("answers") or []
        for candidate in record.get("candidates", []):
            if candidate.get("reading") not in SPAN_READINGS:
                continue
            labels.append(int(bool(golds) and contains_answer(candidate["answer"], golds) > 0))
            for name in signals:
                values[name].append(float(candidate.get("features", {}).get(name, 0.0)))
    found: dict[str, float | int | None] = {"candidates": len(labels), "right": sum(labels)}
    separable = 0 < sum(labels) < len(labels)
    for name in signals:
        found[name] = roc_auc(np.array(labels), np.array(values[name])) if separable else None
    return found


def table(folder: Path, signals: Sequence[str]) -> str:
    """A Markdown table: one row per results.jsonl under `folder`."""
    lines = ["| set | candidates | right | " + " | ".join(signals) + " |", "|---|---|---|" + "---|" * len(signals)]
    for results in sorted(folder.rglob("results.jsonl")):
        found = signal_aucs(results, signals)
        cells = ["" if found[name] is None else f"{found[name]:.3f}" for name in signals]
        counts = f"| {results.parent.name} | {found['candidates']} | {found['right']} | "
        lines.append(counts + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of eval runs (every results.jsonl under it)")
    parser.add_argument("--signals", nargs="+", default=list(DEFAULT_SIGNALS), help="recorded feature names")
    args = parser.parse_args(argv)
    print(table(args.folder, args.signals))


if __name__ == "__main__":
    main()
