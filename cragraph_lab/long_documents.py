"""`python -m cragraph_lab bench long-documents`: the Graph RAG design's benchmark shape on a folder of long, sectioned
documents (data/longdocs_*): every question asked in each retrieval mode, scored by items, reported per type and mode.

A question is right when its answer holds a gold answer; a list question when it names three quarters of its
items (cragraph.evaluation.qa_metrics.holds_answer); an unanswerable one when the run abstains. The design scored
with an LLM judge reading the answer; ours is string matching against the gold forms, which is stricter for a
paraphrase and cannot be talked into a near miss. The index is built once and each mode answers over it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cragraph.evaluation.folder_qa import answer_questions, read_questions
from rag.config import operator_config

MODES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {  # name -> (Context fields, operator sections)
    "dense": ({}, {"retrieval": {"mode": "dense"}}),
    "bm25": ({}, {"retrieval": {"mode": "bm25"}}),
    "hybrid": ({}, {}),  # the defaults
    "graph": ({}, {"techniques": {"graph_walk": True}}),
    "strategy=auto": ({"strategy": "auto"}, {}),
    "multihop=always": ({"multihop": "always"}, {}),
}


def scored(record: dict[str, Any]) -> bool:
    """Right by the benchmark's rule: an unanswerable question is right when abstained."""
    if not record.get("answers"):
        return record["outcome"] == "abstained"
    return record["outcome"] == "right"


def run_long_documents(folder: Path, out: Path, modes: Sequence[str] = tuple(MODES), progress: bool = True
                       ) -> dict[str, Any]:
    """Answer folder/questions.jsonl over folder/corpus in every mode; write out/<mode>/results.jsonl and
    out/report.json and out/report.md; return the report."""
    from stores.bundle import IndexBundle, IndexSettings

    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown modes {unknown}; known: {', '.join(MODES)}")
    questions = read_questions(folder / "questions.jsonl")
    index = out / "index"
    IndexBundle.build(index, [folder / "corpus"], IndexSettings(), progress=progress)
    report: dict[str, Any] = {"folder": str(folder), "questions": len(questions), "modes": {}}
    for mode in modes:
        fields, sections = MODES[mode]
        with operator_config(**sections):
            records = answer_questions(questions, index, fields, progress)
        (out / mode).mkdir(parents=True, exist_ok=True)
        (out / mode / "results.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for record in records:
            by_type[record["type"]][0] += scored(record)
            by_type[record["type"]][1] += 1
        report["modes"][mode] = {"right": sum(r for r, _ in by_type.values()), "types": dict(by_type)}
    (out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    (out / "report.md").write_text(markdown(report) + "\n", encoding="utf-8")
    return report


def markdown(report: dict[str, Any]) -> str:
    modes = report["modes"]
    types = sorted({t for m in modes.values() for t in m["types"]})
    lines = ["| mode | " + " | ".join(types) + " | all |", "|---" * (len(types) + 2) + "|"]
    for mode, row in modes.items():
        cells = [f"{row['types'].get(t, [0, 0])[0]}/{row['types'].get(t, [0, 0])[1]}" for t in types]
        lines.append(f"| {mode} | " + " | ".join(cells) + f" | {row['right']}/{report['questions']} |")
    total = sum(row["right"] for row in modes.values())
    lines.append(f"\nAll modes: {total} of {report['questions'] * len(modes)}.")
    return "\n".join(lines)
