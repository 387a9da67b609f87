"""`python -m cragraph_lab bench long-documents`: the Graph RAG design's benchmark shape on a folder of long, sectioned
documents (data/longdocs_*): every question asked in each retrieval mode, scored by items, reported per type and mode.

A question is right when its answer holds a gold answer; a list question when it names three quarters of its
items (cragraph.evaluation.qa_metrics.holds_answer); an unanswerable one when the run abstains. A second table says
where the defaults lost the right answers: not in the passages the answer read (retrieval and selection), read but
no candidate right (the reader), a right candidate not chosen (the decision's ranking), chosen but withheld (its
probability under `answer_threshold`). The design scored with an LLM judge reading the answer; ours is string
matching against the gold forms, which is stricter for a paraphrase and cannot be talked into a near miss. The index
is built once and each mode answers over it.
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
        report["modes"][mode] = {"right": sum(r for r, _ in by_type.values()), "types": dict(by_type),
                                 "stages": stage_counts(records)}
    (out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    (out / "report.md").write_text(markdown(report) + "\n", encoding="utf-8")
    return report


STAGES = ("questions", "in_context", "in_candidates", "chosen_right", "right")


def stage_counts(records: Sequence[dict[str, Any]]) -> dict[str, list[int]]:
    """Per type, of the questions with a gold answer: how many there are, how many the passages read hold, how
    many a candidate answers right, how many the chosen candidate answers right, how many are answered right."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * len(STAGES))
    for record in records:
        if not record.get("answers"):
            continue
        row = counts[record["type"]]
        for i, held in enumerate([True, record.get("in_context"), record.get("in_candidates"),
                                  record.get("chosen_right"), record["outcome"] == "right"]):
            row[i] += bool(held)
    return dict(counts)


def markdown(report: dict[str, Any]) -> str:
    modes = report["modes"]
    types = sorted({t for m in modes.values() for t in m["types"]})
    lines = ["| mode | " + " | ".join(types) + " | all |", "|---" * (len(types) + 2) + "|"]
    for mode, row in modes.items():
        cells = [f"{row['types'].get(t, [0, 0])[0]}/{row['types'].get(t, [0, 0])[1]}" for t in types]
        lines.append(f"| {mode} | " + " | ".join(cells) + f" | {row['right']}/{report['questions']} |")
    total = sum(row["right"] for row in modes.values())
    lines.append(f"\nAll modes: {total} of {report['questions'] * len(modes)}.")
    mode = "hybrid" if "hybrid" in modes else next(iter(modes), None)
    stages = modes[mode].get("stages") if mode else None
    if stages:
        lines += [f"\nWhere the right answers were lost ({mode}; questions with a gold answer):\n",
                  "| type | questions | in the passages read | a candidate right | chosen right | answered right |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {kind} | " + " | ".join(str(n) for n in row) + " |" for kind, row in sorted(stages.items())]
    return "\n".join(lines)
