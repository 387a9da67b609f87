"""`cragraph replay-plan FILE`: run a multi-hop plan again from its DSL text (a run's `plan_dsl`, or a trace).

The file is either the DSL itself or a JSON run output / trace that carries it (`plan_dsl`, or a translate
trace record's `dsl`). The plan runs through the same deterministic runtime as in the graph, on the
given index.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def register(commands: argparse._SubParsersAction) -> None:
    from cragraph.cli.options import DEFAULT_INDEX

    replay = commands.add_parser(
        "replay-plan", help="execute a multi-hop plan from its DSL text (or a run's JSON)"
    )
    replay.add_argument("file", help="DSL text file, or JSON holding `plan_dsl` (a run output or its trace)")
    replay.add_argument("--index", default=DEFAULT_INDEX, help="bundle folder (default: %(default)s)")
    replay.add_argument("--question", default=None, help="the question (default: taken from the plan)")
    replay.add_argument("--json", action="store_true", help="print step records and evidence as JSON")
    replay.set_defaults(run=_replay)


def plan_text(raw: str) -> str:
    """The DSL from a file's text: the text itself, or the `plan_dsl` / translate `dsl` inside JSON."""
    stripped = raw.lstrip()
    if not stripped.startswith(("{", "[")):
        return raw
    found = _find_dsl(json.loads(raw))
    if found is None:
        raise ValueError("the JSON holds no plan: expected a `plan_dsl` key or a translate trace record")
    return found


def _find_dsl(value: Any) -> str | None:
    if isinstance(value, dict):
        if isinstance(value.get("plan_dsl"), str):
            return value["plan_dsl"]
        if value.get("node") == "translate" and isinstance(value.get("dsl"), str):
            return value["dsl"]
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        found = _find_dsl(child)
        if found:
            return found
    return None


def _replay(args: argparse.Namespace) -> int:
    from nodes.multihop.execute import run_plan
    from rag.context import Context
    from rag.planning.dsl import parse_dsl

    plan = parse_dsl(plan_text(Path(args.file).read_text(encoding="utf-8")))
    question = args.question or _plan_question(plan)
    run = run_plan(plan, Context(index=args.index), question)
    if args.json:
        print(
            json.dumps(
                {"steps": run.records, "answer": run.answer, "evidence": [h.to_dict() for h in run.evidence]},
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    for record in run.records:
        detail = record.get("note") or ", ".join(map(str, record.get("values", record.get("hits", []))))[:90]
        print(f"{record['status']:6} {record['step']:16} {record['op']:16} {record['ms']:7.1f} ms  {detail}")
    print("\nevidence:")
    for n, hit in enumerate(run.evidence, start=1):
        print(f"  [{n}] {hit.chunk.id}  {hit.chunk.title}  ({', '.join(hit.sources)})")
    if run.answer:
        print(f"\nanswer: {run.answer}")
    return 0


def _plan_question(plan: Any) -> str:
    for step in plan.steps:
        if step.op == "SYNTHESIZE" and step.args.get("question"):
            return str(step.args["question"])
    first = next((s for s in plan.steps if s.op == "RETRIEVE" and s.args.get("query")), None)
    return str(first.args["query"]) if first else ""
