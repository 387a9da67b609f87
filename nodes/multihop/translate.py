"""translate: CompiledPlan -> linear DSL text -> parsed Plan. The DSL text goes into state and the trace, so
`cragraph replay-plan` can run exactly this plan again; the parse must round-trip to the same Plan."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from rag.context import Context
from rag.planning.dsl import parse_dsl, to_dsl, translate
from rag.planning.plan import CompiledPlan
from rag.state import MultihopState, StageTimer


def plan_translate(state: MultihopState, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("translate")
    plan = translate(CompiledPlan.model_validate(state["compiled_plan"]))
    text = to_dsl(plan)
    parsed = parse_dsl(text)
    if parsed != plan:  # a printer/parser disagreement is a bug, never a user error: refuse to run
        raise RuntimeError(
            "the plan DSL did not round-trip; refusing to execute a plan that differs from its text"
        )
    return {
        "plan": parsed.model_dump(),
        "plan_dsl": text,
        "trace": [timer.record(f"{len(parsed.steps)} steps", {"steps": len(parsed.steps)}, dsl=text)],
    }
