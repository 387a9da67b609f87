"""execute: the parsed plan run by the deterministic runtime over the index; its evidence goes to selection.

The LLM is used here only when switched on, as a value source (EXTRACT_ANSWER, SYNTHESIZE) behind strict JSON;
the control flow is the plan's. Evidence leaves as passage dicts (`knowledge`, what select reads) and as
Hit.to_dict() records (`evidence_hits`), best first, at most the plan's max_evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import bundle_of, evaluator_of, settings_of, thresholds_for, visible_of
from prompts.extract_answer import ShortAnswer, extract_answer_messages
from prompts.synthesize import synthesize_messages
from rag.answering import rules
from rag.config import operator
from rag.context import Context
from rag.knowledge.passages import passage_of
from rag.planning.dsl import Plan
from rag.planning.runtime import ExpandFn, PlanRun, PlanRuntime, ReadFn, ValueFn
from rag.planning.settings import MultihopSettings
from rag.reader import Passage
from rag.reader.cache import load_reader
from rag.retrieval.graph_walk import GraphSettings, graph_rerank
from rag.retrieval.retriever import HybridRetriever
from rag.state import MultihopState, StageTimer
from stores.backend import Index
from stores.text import language_of
from stores.types import Hit


def llm_value_fn(spec: str, build_messages: Any, max_passages: int = 5) -> ValueFn:
    """A ValueFn asking the chat model for {"answer": ...} over the top passages."""

    def ask(question: str, hits: list[Hit]) -> tuple[str | None, str | None]:
        messages = build_messages(question, [h.chunk.passage for h in hits[:max_passages]])
        parsed, error = ask_structured(spec, messages, ShortAnswer, max_new_tokens=48)
        if parsed is None:
            return None, error
        value = (parsed.answer or "").strip()
        return (value, None) if value else (None, "the model found no answer")

    return ask


def reader_values(reader_path: str, language: str, read_top: int = 5) -> ReadFn:
    """EXTRACT_ANSWER's value source without an LLM: the span reader's best answers to the hop's question over
    its top passages, with the scores the answer step later weighs the chain by."""

    def read(question: str, hits: list[Hit], n: int) -> list[dict[str, Any]]:
        top = hits[:read_top]
        passages = [Passage(h.chunk.text, h.chunk.title, float(h.score), h.chunk.metadata.get("table_header") or "")
                    for h in top]
        ranked = rules.read_ranked(load_reader(reader_path), question, passages, language, top=n)
        return [{"text": " ".join(r.text.split()), "margin": r.margin, "share": r.confidence,
                 "passage_id": top[r.passage].chunk.id} for r in ranked if r.kind == "span"]

    return read


def plan_runtime(
    bundle: Index,
    settings: Context,
    multihop: MultihopSettings,
    question: str,
    filters: dict[str, Any] | None,
    plan: Plan | None = None,
    visible: np.ndarray | None = None,
) -> PlanRuntime:
    """A runtime searching `bundle` with the operator's retrieval settings and the filters, within the `visible`
    rows (the caller's documents; None: all)."""
    config = operator()
    retriever = HybridRetriever(bundle, config.retrieval, visible=visible)

    def search(query: str, k: int) -> list[Hit]:
        return retriever.search(query, k=k, filters=filters or None)

    spec = settings.model_for(multihop.decompose_model)
    needs_evaluator = plan is not None and any(s.op == "FILTER_CE" or s.args.get("grade") for s in plan.steps)
    return PlanRuntime(
        search,
        multihop.limits(),
        extract_answer=llm_value_fn(spec, extract_answer_messages) if multihop.llm_extract else None,
        synthesize=llm_value_fn(spec, synthesize_messages, 8) if multihop.llm_synthesize else None,
        evaluator=evaluator_of(settings, bundle) if needs_evaluator else None,
        grade_thresholds=thresholds_for(settings, bundle)[:2],
        language=language_of(question),
        graph_expand=graph_expander(retriever, config.graph, filters),
        read_answers=reader_values(config.answer.reader_path, language_of(question)),
    )


def graph_expander(retriever: HybridRetriever, graph: GraphSettings, filters: dict[str, Any] | None) -> ExpandFn:
    """GRAPH_EXPAND's walk without the walk's own second hop: a plan makes its hops with its sub-questions."""
    graph = replace(graph, second_hop=False)

    def expand(question: str, hits: list[Hit], k: int) -> tuple[list[Hit], str]:
        walked = graph_rerank(retriever, question, language_of(question), hits, k, graph, filters or None)
        return walked.hits, walked.note
    return expand


def run_plan(
    plan: Plan, settings: Context, question: str, filters: dict[str, Any] | None = None, runtime: Any = None
) -> PlanRun:
    """Run the plan; `runtime` (the node's) decides which documents the caller may see (None: all)."""
    multihop = operator().multihop
    bundle = bundle_of(settings)
    return plan_runtime(bundle, settings, multihop, question, filters, plan, visible_of(runtime, bundle)).run(plan)


def plan_execute(state: MultihopState, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("execute")
    settings = settings_of(runtime)
    plan = Plan.model_validate(state["plan"])
    run = run_plan(plan, settings, state["question"], state.get("filters"), runtime)
    evidence = run.evidence
    failed = run.failed
    counts = {
        "steps": len(run.records),
        "failed": len(failed),
        "evidence": len(evidence),
        "searches": sum(1 for r in run.records if r["op"] in ("RETRIEVE", "MAP_RETRIEVE")),
    }
    return {
        "step_results": run.records,
        "facets": filled_facets(state.get("facets") or [], run),
        "evidence_hits": [hit.to_dict() for hit in evidence],
        "knowledge": passages(evidence),
        "candidates": passages(evidence),  # what the main graph grades before refining and selecting
        "multihop_answer": run.answer,
        "hops": hop_records(state.get("compiled_plan") or {}, run),
        "trace": [
            timer.record(
                f"{len(evidence)} evidence passages from {len(run.records)} steps",
                counts,
                [h.score for h in evidence],
                note=f"failed: {', '.join(failed)}" if failed else None,
                steps=run.records,
            )
        ],
    }


def filled_facets(facets: list[str], run: PlanRun) -> list[str]:
    """The sub-questions selection must cover, with slots filled by what the plan found: "In which city was
    {x1} born?" becomes "In which city was Marta Kowalczyk born?" (a slotted text alone says too little); every
    candidate filling counts, since the first extracted value is not always the right one."""
    return [*(f for f in facets if "{" not in f), *composed_queries(run)]


def composed_queries(run: PlanRun) -> list[str]:
    """The plan's sub-questions whose slots it filled ("In which city was Marta Kowalczyk born?")."""
    return [
        query
        for value in run.values.values()
        if value is not None and value.kind == "queries"
        for query in value.strings
    ]


def passages(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """Evidence as the main graph's passage dicts, with the plan steps that found each one."""
    return [{**passage_of(hit), "plan_steps": list(hit.sources)} for hit in hits]


HOP_PASSAGES = 5  # passages of each hop kept for reading along the plan


def hop_records(compiled: dict[str, Any], run: PlanRun) -> list[dict[str, Any]]:
    """Each sub-question as the answer step reads it: its text, the queries it was asked as (slots filled), the
    hops it depends on, its top passages and, for a slot producer, the answers it extracted with their scores."""
    subs = compiled.get("sub_questions") or []
    producer = {sub["extract_slot"]: sub["id"] for sub in subs if sub.get("extract_slot")}
    hops = []
    for sub in subs:
        retrieved = run.values.get(sub["id"])
        extracted = run.values.get(f"{sub['id']}_ans")
        answers = []
        if extracted is not None:
            answers = extracted.readings or [{"text": text} for text in extracted.strings]
        hops.append({
            "id": sub["id"],
            "question": sub["query"],
            "slot": sub.get("extract_slot"),
            "deps": [producer[slot] for slot in sub.get("slots_in", []) if slot in producer],
            "queries": list(retrieved.strings) if retrieved is not None else [],
            "passages": passages(retrieved.hits[:HOP_PASSAGES]) if retrieved is not None else [],
            "answers": answers,
        })
    return hops
