"""validate: the decomposition DAG checked against the rules; a rejected one moves the chain on.

Rules (stores/plan.validate_decomposition): 1-5 sub-questions, limited deps per node, known deps, no cycles,
each slot defined once, used at least once, and only by sub-questions downstream of its producer.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from rag.config import operator
from rag.context import Context
from rag.planning.plan import Decomposition, validate_decomposition
from rag.state import MultihopState, StageTimer


def plan_validate(state: MultihopState, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("validate")
    multihop = operator().multihop
    source = state.get("decomposition_source", "")
    raw = state.get("decomposition")
    errors = (
        list(state.get("plan_errors") or [])
        if raw is None
        else validate_decomposition(Decomposition.model_validate(raw), multihop.limits())
    )
    valid = raw is not None and not errors
    update: dict[str, Any] = {"plan_valid": valid, "plan_errors": errors}
    if raw is not None and valid:
        update["facets"] = [q["text"] for q in raw["sub_questions"]]
        decision = f"{source} plan valid"
    else:
        update["decompose_stage"] = state.get("decompose_stage", 0) + 1
        decision = f"{source} plan rejected: {len(errors)} errors"
    update["trace"] = [
        timer.record(decision, {"errors": len(errors)}, note="; ".join(errors)[:300] or None, source=source)
    ]
    return update


def route_after_validate(state: MultihopState) -> Literal["compile", "decompose", "__end__"]:
    """A valid plan compiles; an invalid one goes back to decompose, whose chain ends in single-hop. When even
    the single-hop plan is refused (a limit of 0 sub-questions) the planning ends without evidence, rather
    than asking decompose for it again until the recursion limit."""
    if state.get("plan_valid"):
        return "compile"
    return "__end__" if state.get("decomposition_source") == "single" else "decompose"
