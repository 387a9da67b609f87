"""route: which retrieval tool answers this question, and on a re-retrieval round, the next tool to try.

First round, three tiers, each with its confidence in the trace: the rules (rag.retrieval.strategy.recommend:
bilingual keyword and pattern rules, no model) when `strategy` is auto (an enumeration question is routed to the
full-document read in manual mode too); the optional LLM classifier (`llm_route`: single-hop or multi-hop,
validated JSON, the rule route kept when the reply is unusable); the last-resort pattern tier (the rule
decomposer's bridge / comparison shapes send a question to the planning subgraph). Later rounds (after rewrite,
when grading said retrieval failed) move one step along the escalation chain (dense -> hybrid -> graph ->
comprehensive -> full_document); grade keeps the best-graded round, so escalating never costs a better result.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import bundle_of, settings_of
from prompts.route import RouteChoice, route_messages
from rag.config import operator
from rag.context import Context
from rag.retrieval.analysis import QueryAnalysis, analysis_of
from rag.retrieval.strategy import choose_strategy, escalate
from rag.state import StageTimer, State


def route(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("route")
    settings = settings_of(runtime)
    if state.get("retrieval_round", 0) > 0:
        return _escalated(state, timer)
    question = state["question"]
    analysis = analysis_of(state.get("analysis"), question, bundle_of(settings).bm25)
    strategy = choose_strategy(analysis, settings.strategy, settings.latency_budget_ms)
    counts = {"alternatives": len(strategy["alternatives"])}
    if state.get("recommend_only"):
        decision = f"recommend {strategy['name']} ({strategy['confidence']:.2f})"
        return {"strategy": strategy, "trace": [timer.record(decision, counts, note=strategy["reason"])]}
    route_, tier = ("multihop", "rules") if strategy["name"] == "multihop" else (
        choose_route(analysis, settings.multihop), "pattern")
    note = strategy["reason"]
    if settings.multihop == "auto" and operator().route.llm:
        spec = settings.model_for(operator().models.route)
        parsed, error = ask_structured(spec, route_messages(question), RouteChoice)
        if parsed is not None:
            route_, tier = parsed.route, "LLM"
        note = "; ".join([note, f"LLM route: {parsed.route}" if parsed else f"{error}; rule route"])
    if route_ == "multihop" and operator().multihop.max_sub_questions == 0:  # a budget of 0 means none
        route_, tier = "single", "budget"
        note = f"{note}; [multihop] max_sub_questions=0: no planned sub-questions, single-hop retrieval"
    confidence = strategy["confidence"]
    decision = f"{route_} ({tier}), strategy {strategy['name']}" + (
        f" ({confidence:.2f})" if confidence is not None else "")
    return {"route": route_, "strategy": strategy, "trace": [timer.record(decision, counts, note=note)]}


def _escalated(state: State, timer: StageTimer) -> dict[str, Any]:
    """The next tool along the chain for this round (rewrite already wrote its query), or the same at its end."""
    current = state.get("strategy") or {}
    following = escalate(current) if current else None
    round_ = state.get("retrieval_round", 0)
    if following is None:
        decision = f"round {round_}: {current.get('name', 'manual')} kept (end of the escalation chain)"
        return {"trace": [timer.record(decision, {"round": round_})]}
    decision = f"round {round_}: escalated {current.get('name')} -> {following['name']}"
    return {"strategy": following, "trace": [timer.record(decision, {"round": round_}, note=following["reason"])]}


def choose_route(analysis: QueryAnalysis, multihop: str = "auto") -> str:
    """'multihop' when the setting says always, or (auto) when the rule decomposer finds a bridge or comparison
    structure in the question ("the X of the Y that ...", "which is older, A or B"); else 'single'."""
    if multihop not in ("auto", "always", "never"):
        raise ValueError(f"Context.multihop must be auto, always or never, not {multihop!r}")
    if multihop != "auto":
        return "multihop" if multihop == "always" else "single"
    return "multihop" if analysis.rule_plan is not None else "single"
