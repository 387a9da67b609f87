"""refine: decompose the kept passages into knowledge strips, score each strip, drop those under the strip
threshold (none at the default), recompose in order (rag.knowledge.strips; the web branch refines its
results the same way). Passages graded incorrect reach here only when neither the web nor another retrieval round
can replace them: all are kept, since the grader found none it could tell apart, and the answer's decision, which
knows the verdict, judges what they say."""

from __future__ import annotations

import math
from typing import Any

from langgraph.runtime import Runtime

from nodes._runtime import bundle_of, evaluator_of, settings_of, thresholds_for
from rag.config import operator
from rag.context import Context
from rag.knowledge.strips import multihop_floor, passages_to_refine, refine_passages
from rag.state import StageTimer, State


def refine(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("refine")
    settings, config = settings_of(runtime), operator()
    at_least = multihop_floor(state, config.refine.min_passages)
    _, lower, _ = thresholds_for(settings, bundle_of(settings))
    if state.get("verdict") == "incorrect":
        lower = -math.inf
    kept_passages, left_out = passages_to_refine(state.get("candidates", []), lower, at_least, state["question"])
    if not config.refine.enabled:
        knowledge = [{**p, "strips": []} for p in kept_passages]
        return {
            "knowledge": knowledge,
            "trace": [timer.record("refinement off", {"passages": len(knowledge)})],
        }
    evaluator = evaluator_of(settings, bundle_of(settings))
    knowledge, stats = refine_passages(
        state["question"], kept_passages, evaluator, config.strips,
        reference=left_out,
    )
    update: dict[str, Any] = {"knowledge": knowledge}
    if settings.debug:
        update["debug"] = {"refine": knowledge}
    update["trace"] = [
        timer.record(f"kept {stats['strips_kept']} of {stats['strips']} strips", stats, stats.pop("scores"))
    ]
    return update

