"""`python -m reader.evaluate`: EM / F1 of the reader on the report sets, with gold or retrieved passages.

Also reports: in_context (a gold answer occurs in the text the reader read: the ceiling of extraction),
top20 (a gold answer is among the 20 best distinct spans: the ceiling of any re-ranking of the reader's
candidates), ms per question (one thread, wall clock of Reader.read), and EM by question form.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from bench.qa_metrics import contains_answer, exact_match, token_f1

from reader.examples import report_examples
from reader.questions import question_form
from reader.reader import DEFAULT_WEIGHTS, Reader

SETS = ("hotpotqa", "xquad-en", "xquad-ru", "xquad-zh", "nq")


def run(reader: Reader, name: str, context: str, limit: int | None = None) -> tuple[dict, list[dict]]:
    examples = report_examples(name, context)[:limit]
    rows = []
    for ex in examples:
        t = time.perf_counter()
        answer, scored, candidates = reader.read_detailed(ex.question, ex.passages, ex.language)
        ms = (time.perf_counter() - t) * 1000
        spans = [a.text for a in candidates]
        prediction = answer.text if answer else ""
        rows.append({"id": ex.id, "question": ex.question, "answers": ex.answers, "prediction": prediction,
                     "kind": answer.kind if answer else "none", "form": question_form(ex.question, ex.language).kind,
                     "qtype": ex.qtype, "EM": exact_match(prediction, ex.answers) if prediction else 0.0,
                     "F1": token_f1(prediction, ex.answers) if prediction else 0.0,
                     "in_context": contains_answer(scored.context.text, ex.answers) if scored else 0.0,
                     "top20": float(any(exact_match(s, ex.answers) for s in spans)), "ms": ms})
    summary = {"set": name, "context": context, "n": len(rows)}
    for key in ("EM", "F1", "in_context", "top20"):
        summary[key] = round(float(np.mean([r[key] for r in rows])), 4)
    summary["ms_p50"] = round(float(np.percentile([r["ms"] for r in rows], 50)), 1)
    summary["ms_p95"] = round(float(np.percentile([r["ms"] for r in rows], 95)), 1)
    by: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by[f"form:{r['form']}"].append(r["EM"])
        if r["qtype"]:
            by[f"type:{r['qtype']}"].append(r["EM"])
    summary["EM_by"] = {k: [len(v), round(float(np.mean(v)), 3)] for k, v in sorted(by.items())}
    return summary, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--contexts", nargs="*", default=["gold", "retrieved"])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--read-budget", type=int, default=None, help="context tokens read (default: trained)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "results")
    args = parser.parse_args()
    torch.set_num_threads(1)
    reader = Reader.load(args.weights)
    if args.read_budget:
        reader.config["read_budget"] = args.read_budget
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.sets:
        for context in args.contexts:
            summary, rows = run(reader, name, context, args.limit)
            print(json.dumps(summary, ensure_ascii=False), flush=True)
            stem = args.out / f"{name}-{context}"
            stem.with_suffix(".json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
            with open(f"{stem}.jsonl", "w", encoding="utf-8") as handle:
                for r in rows:
                    handle.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
