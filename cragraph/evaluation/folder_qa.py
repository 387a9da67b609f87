"""`cragraph eval folder`: a folder of a user's own documents and a questions file, answered by the graph at its
defaults; right / wrong / abstained per question type and language, and each answer's hop chain.

Why beside `eval qa`: the benchmark sets are JSONL corpora, while a user's documents are files (Markdown, text,
HTML, ...) that go through the same loaders and index as `cragraph index`. Questions are JSON lines with
`id`, `question`, `answers` ([] for a question the documents cannot answer), `type` and `language`. A question is
answered right when its answer holds a gold answer (Contains, as Truth counts it), or for a list question with
`items` (each a list of acceptable forms) when it names three quarters of them; any answer to a question with no
gold answer is wrong.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from cragraph.evaluation.qa_metrics import holds_answer


def read_questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def answer_folder(corpus: Path, questions: Sequence[dict[str, Any]], index: Path,
                  overrides: dict[str, Any] | None = None, progress: bool = True) -> list[dict[str, Any]]:
    """Index `corpus` into `index` (rebuilt) and answer every question with the graph; one record each."""
    from stores.bundle import IndexBundle, IndexSettings

    IndexBundle.build(index, [corpus], IndexSettings(), progress=False)
    return answer_questions(questions, index, overrides, progress)


def answer_questions(questions: Sequence[dict[str, Any]], index: Path, overrides: dict[str, Any] | None = None,
                     progress: bool = True) -> list[dict[str, Any]]:
    """Answer every question with the graph over an index already built; one record each."""
    from graph import graph
    from rag.context import Context

    context = Context(**{"index": str(index), "web_search": False, **(overrides or {})})
    keys = [*graph.output_channels, "selected", "hops"]  # what the answer read, for the stage columns
    records = []
    for question in tqdm(questions, desc="questions", disable=not progress):
        started = time.perf_counter()
        result = graph.invoke({"question": question["question"]}, context=context, output_keys=keys)
        elapsed = (time.perf_counter() - started) * 1000
        answer: dict[str, Any] = next((r for r in result.get("trace", []) if r.get("node") == "answer"), {})
        golds, items = question.get("answers") or [], question.get("items")
        records.append({
            **{k: question.get(k) for k in ("id", "question", "answers", "type", "language", "items")},
            "answer": result.get("answer", ""),
            "abstained": bool(result.get("abstained")),
            "outcome": outcome(result, golds, items),
            "confidence": result.get("confidence") or (result.get("withheld") or {}).get("confidence"),
            "chain": answer.get("chain") or [],
            "ms": round(elapsed, 1),
            # what `python -m cragraph_lab bench decision-training` reads: every candidate the answer node weighed
            "mode": "crag-multihop",
            "unanswerable": not golds,
            "candidates": answer.get("candidates") or [],
            **stages(result, answer.get("candidates") or [], golds, items),
        })
    return records


def stages(result: dict[str, Any], candidates: Sequence[dict[str, Any]], golds: Sequence[str],
           items: Sequence[Sequence[str]] | None) -> dict[str, bool | None]:
    """Where a right answer was lost: whether the passages the answer read (the selected context and the plan's
    hops) hold it (a list: three quarters of its items), whether a candidate the answer weighed is right, and
    whether the one it chose is, given or withheld. None for a question with no gold answer."""
    if not golds:
        return {"in_context": None, "in_candidates": None, "chosen_right": None}
    read = [p.get("text", "") for p in result.get("selected") or []]
    read += [p.get("text", "") for hop in result.get("hops") or [] for p in hop.get("passages") or []]
    chosen = (result.get("withheld") or {}).get("answer", "") if result.get("abstained") else result.get("answer", "")
    return {"in_context": holds_answer(" \n ".join(read), golds, items),
            "in_candidates": any(holds_answer(c.get("answer", ""), golds, items) for c in candidates),
            "chosen_right": holds_answer(chosen, golds, items)}


def outcome(result: dict[str, Any], golds: Sequence[str], items: Sequence[Sequence[str]] | None = None) -> str:
    """right, wrong or abstained."""
    if result.get("abstained"):
        return "abstained"
    return "right" if holds_answer(result.get("answer", ""), golds, items) else "wrong"


def summary(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Right / wrong / abstained counts per question type (all languages), then per type and language; of the
    questions with a gold answer, how many the passages read hold and how many a candidate answered right."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["type"], "all")].append(record)
        groups[(record["type"], record["language"])].append(record)
    rows = []
    for (kind, language), members in sorted(groups.items()):
        counts = {o: sum(r["outcome"] == o for r in members) for o in ("right", "wrong", "abstained")}
        answerable = [r for r in members if r.get("answers")]
        rows.append({"type": kind, "language": language, "questions": len(members), **counts,
                     "answerable": len(answerable), "in_context": sum(bool(r.get("in_context")) for r in answerable),
                     "in_candidates": sum(bool(r.get("in_candidates")) for r in answerable)})
    return rows


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| type | language | questions | right | wrong | abstained | answer in the passages read | a candidate "
             "right |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        stages = [f"{r[k]}/{r['answerable']}" if r.get("answerable") else "-" for k in ("in_context", "in_candidates")]
        lines.append(f"| {r['type']} | {r['language']} | {r['questions']} | {r['right']} | {r['wrong']} | "
                     f"{r['abstained']} | {stages[0]} | {stages[1]} |")
    return "\n".join(lines)


def run_folder_eval(corpus: Path, questions_file: Path, out: Path, overrides: dict[str, Any] | None = None,
                    progress: bool = True) -> list[dict[str, Any]]:
    """Answer, write out/results.jsonl and out/summary.md, return the summary rows."""
    out.mkdir(parents=True, exist_ok=True)
    records = answer_folder(corpus, read_questions(questions_file), out / "index", overrides, progress)
    (out / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                       encoding="utf-8")
    rows = summary(records)
    (out / "summary.md").write_text(markdown(rows) + "\n", encoding="utf-8")
    return rows
