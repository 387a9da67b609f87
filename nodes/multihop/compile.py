"""compile: the valid DAG as a CompiledPlan (JSON). Deterministic by default; an LLM compiler is optional and
its output is validated like the decomposer's, with the deterministic compiler as its fallback."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import settings_of
from prompts.compile_plan import compile_messages
from rag.config import operator
from rag.context import Context
from rag.planning.plan import CompiledPlan, Decomposition, compile_decomposition, validate_compiled
from rag.planning.settings import MultihopSettings
from rag.state import MultihopState, StageTimer


def plan_compile(state: MultihopState, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("compile")
    settings = settings_of(runtime)
    multihop = operator().multihop
    question = state["question"].strip()
    decomposition = Decomposition.model_validate(state["decomposition"])
    compiled, note = None, None
    if multihop.llm_compile:
        compiled, note = llm_compile(
            question, decomposition, settings.model_for(multihop.decompose_model), multihop
        )
    compiler = "llm" if compiled else "deterministic"
    if compiled is None:
        compiled = compile_decomposition(
            question, decomposition, multihop.compile_settings(), bridge=multihop.bridge
        )
    counts = {"sub_questions": len(compiled.sub_questions), "hit_sources": len(compiled.hit_sources)}
    decision = (
        f"{compiler}: {len(compiled.sub_questions)} sub-questions, {compiled.merge} of "
        f"{', '.join(compiled.hit_sources)}"
    )
    return {"compiled_plan": compiled.model_dump(), "trace": [timer.record(decision, counts, note=note)]}


def llm_compile(
    question: str, decomposition: Decomposition, spec: str, multihop: MultihopSettings
) -> tuple[CompiledPlan | None, str | None]:
    """The chat model's CompiledPlan when it parses and validates, else (None, why)."""
    limits = multihop.limits()
    messages = compile_messages(question, decomposition.model_dump(), limits.max_top_k, limits.max_evidence)
    compiled, error = ask_structured(spec, messages, CompiledPlan)
    if compiled is None:
        return None, f"LLM compiler: {error}; deterministic compiler used"
    errors = validate_compiled(compiled, limits)
    if errors:
        return None, f"LLM plan rejected ({'; '.join(errors)[:200]}); deterministic compiler used"
    return compiled, "LLM compiler plan validated"
