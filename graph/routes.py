"""Conditional edges: the question's route, the three CRAG branches, and the bounded re-retrieval loop.

The loop budget lives in state (`retrieval_round` < `max_retrieval_rounds`), never in the recursion limit, and
a web search that ran (or could not) is not repeated: `web_status` remembers it. With human review on
(Context.review), the run detours through a review node before the web search or after the answer.
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from nodes._runtime import settings_of
from rag.context import Context
from rag.state import State

Destination = Literal["refine", "web_search", "rewrite", "select"]


def route_question(state: State) -> Literal["retrieve", "multihop", "__end__"]:
    """Single-hop questions go through CRAG retrieval; multi-hop ones to the planning subgraph, whose evidence
    is then graded like retrieved passages; a re-retrieval round (after rewrite) retrieves with the rewritten
    query; a recommend-only request ends with the recommendation."""
    if state.get("recommend_only"):
        return "__end__"
    if state.get("retrieval_round", 0) > 0:
        return "retrieve"
    return "multihop" if state.get("route") == "multihop" else "retrieve"


def _budget_left(state: State) -> bool:
    return state.get("retrieval_round", 0) < state.get("max_retrieval_rounds", 0)


def route_after_grade(
    state: State, runtime: Runtime[Context] | None = None
) -> list[Destination] | list[Literal["review_web"]]:
    """The CRAG route (crag_route); with review="before_web", a route that would search the web goes to
    review_web first, so the person decides before refine and the web search fan out."""
    destinations = crag_route(state)
    settings = settings_of(runtime)
    if "web_search" in destinations and settings.review == "before_web" and settings.web_search:
        review: list[Literal["review_web"]] = ["review_web"]
        return review
    return destinations


def route_after_review_web(state: State) -> list[Destination] | Literal["respond"]:
    """approve: the CRAG route with the web; skip (web_status "skipped by review"): the route without it;
    reject: respond with the abstention review_web wrote."""
    return "respond" if state.get("web_status") == "rejected by review" else crag_route(state)


def route_after_answer(state: State, runtime: Runtime[Context] | None = None) -> Literal["review_answer", "respond"]:
    """With review="before_answer", the drafted answer goes to a person before it is given."""
    return "review_answer" if settings_of(runtime).review == "before_answer" else "respond"


def crag_route(state: State) -> list[Destination]:
    """correct -> refine; ambiguous -> refine and web (in parallel); incorrect -> web, or when the web already
    ran or cannot run: rewrite and retrieve again within the budget, else refine the passages graded incorrect
    (the answer reads them and the decision, which knows the verdict, judges what they say)."""
    verdict = state.get("verdict", "incorrect")
    web_pending = state.get("web_status", "not run") == "not run"
    if verdict == "correct":
        return ["refine"]
    if verdict == "ambiguous":
        return ["refine", "web_search"] if web_pending else ["refine"]
    if web_pending:
        return ["web_search"]
    return ["rewrite"] if _budget_left(state) else ["refine"]


def route_after_web(state: State) -> Destination:
    """After the web: select, unless the grade was incorrect and the web gave nothing: then another retrieval
    round within the budget, else refine the passages graded incorrect (crag_route)."""
    if state.get("verdict") == "incorrect" and not state.get("web_knowledge"):
        return "rewrite" if _budget_left(state) else "refine"
    return "select"
