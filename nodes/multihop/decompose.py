"""decompose: the question as a DAG of sub-questions, from the first source in the fallback chain that runs.

Chain: LLM decomposition -> one LLM retry with the validator's errors -> rule-based decomposition ->
single-hop (the question itself as the only sub-question). `decompose_stage` says which source this round
uses; validate sends the state back here with the next stage when a candidate breaks a rule, so each
outcome is a trace record.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import settings_of
from prompts.decompose import decompose_messages
from rag.config import operator
from rag.context import Context
from rag.planning.plan import Decomposition, SubQuestion
from rag.planning.rules import rule_decomposition
from rag.retrieval.analysis import QueryAnalysis
from rag.state import MultihopState, StageTimer
from stores.text import language_of


def decompose_chain(llm: bool, rules: bool) -> list[str]:
    """The sources tried in order; single-hop always ends the chain (it cannot fail validation)."""
    return [*(["llm", "llm_retry"] if llm else []), *(["rules"] if rules else []), "single"]


def single_hop(question: str) -> Decomposition:
    return Decomposition(sub_questions=[SubQuestion(id="q1", text=question.strip())])


def decompose(state: MultihopState, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("decompose")
    settings = settings_of(runtime)
    multihop = operator().multihop
    question = state["question"].strip()
    chain = decompose_chain(multihop.llm_decompose, multihop.rule_decompose)
    stage_index = min(state.get("decompose_stage", 0), len(chain) - 1)
    source = chain[stage_index]
    decomposition, note = None, None
    if source in ("llm", "llm_retry"):
        retry = source == "llm_retry"
        messages = decompose_messages(
            question,
            language_of(question),
            multihop.max_sub_questions,
            multihop.max_deps,
            errors=state.get("plan_errors") if retry else None,
            previous=state.get("decomposition_reply") if retry else None,
        )
        decomposition, note = ask_structured(
            settings.model_for(multihop.decompose_model), messages, Decomposition
        )
    elif source == "rules":
        stored = state.get("analysis")
        decomposition = (QueryAnalysis.from_dict(stored).decomposition if stored and stored["text"] == question
                         else rule_decomposition(question))
        note = None if decomposition else "no bridge or comparison pattern in the question"
    else:
        decomposition = single_hop(question)
    update: dict[str, Any] = {
        "decompose_stage": stage_index,
        "decomposition_source": source,
        "decomposition": decomposition.model_dump() if decomposition else None,
        "decomposition_reply": decomposition.model_dump_json() if decomposition else (note or ""),
        "plan_errors": [] if decomposition else [note or "no decomposition"],
    }
    count = len(decomposition.sub_questions) if decomposition else 0
    update["trace"] = [
        timer.record(
            f"{source}: {count} sub-questions" if decomposition else f"{source}: failed",
            {"sub_questions": count, "stage": stage_index},
            note=note,
        )
    ]
    return update
