"""The main CRAG graph, compiled as `graph` (what `from graph import graph`, langgraph.json and Studio load).

START -> conversation (the question from `messages` or `question`, a follow-up resolved) -> understand
-> route (the retrieval tool) -> retrieve -> rerank -> grade -> {refine | refine + web_search | web_search |
rewrite} -> select -> highlight -> answer -> respond (the answer as an AIMessage) -> END, with rewrite -> route
(one step along the escalation chain) -> retrieve as the bounded re-retrieval loop; multi-hop questions go
route -> multihop (the planning subgraph) -> grade, so the plan's evidence is graded and refined like retrieved
passages (and replaced by the web's when it is judged incorrect). Human review
(Context.review) adds review_web between grade and a web search, or review_answer between answer and respond.
Importing this module loads no model: nodes load the index and models through per-process caches on first use.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from graph.entry import EntryCheckedGraph, entry_checked
from graph.multihop import multihop_graph
from graph.routes import (
    route_after_answer,
    route_after_grade,
    route_after_review_web,
    route_after_web,
    route_question,
)
from nodes.answer import answer
from nodes.conversation import conversation, respond
from nodes.grade import grade
from nodes.highlight import highlight
from nodes.refine import refine
from nodes.rerank import rerank
from nodes.retrieve import retrieve
from nodes.review import review_answer, review_web
from nodes.rewrite import rewrite
from nodes.route import route
from nodes.select import select
from nodes.understand import understand
from nodes.web_search import web_search
from rag.config import operator
from rag.context import Context
from rag.policy import ClientContext
from rag.state import InputState, OutputState, State

NODES = (
    "conversation",
    "understand",
    "route",
    "multihop",
    "retrieve",
    "rerank",
    "grade",
    "refine",
    "web_search",
    "rewrite",
    "select",
    "highlight",
    "answer",
    "review_web",
    "review_answer",
    "respond",
)


def build_graph() -> StateGraph[State, Context, InputState, OutputState]:
    # A dict context (a server client's run, `invoke(context={...})`) is built as ClientContext: checked against
    # the operator's allow-list (rag/policy.py); a Context built in Python is the operator's own.
    builder: StateGraph[State, Context, InputState, OutputState] = StateGraph(
        State, context_schema=ClientContext, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("conversation", conversation)
    builder.add_node("understand", understand)
    builder.add_node("route", route)
    builder.add_node("multihop", multihop_graph)
    builder.add_node("retrieve", retrieve)
    builder.add_node("rerank", rerank)
    builder.add_node("grade", grade)
    builder.add_node("refine", refine)
    builder.add_node("web_search", web_search)
    builder.add_node("rewrite", rewrite)
    builder.add_node("select", select)
    builder.add_node("highlight", highlight)
    builder.add_node("answer", answer)
    builder.add_node("review_web", review_web)
    builder.add_node("review_answer", review_answer)
    builder.add_node("respond", respond)

    builder.add_edge(START, "conversation")
    builder.add_edge("conversation", "understand")
    builder.add_edge("understand", "route")
    builder.add_conditional_edges("route", route_question, ["retrieve", "multihop", END])
    builder.add_edge("multihop", "grade")
    builder.add_edge("retrieve", "rerank")
    builder.add_edge("rerank", "grade")
    builder.add_conditional_edges(
        "grade", route_after_grade, ["refine", "web_search", "rewrite", "review_web"]
    )
    builder.add_conditional_edges(
        "review_web", route_after_review_web, ["refine", "web_search", "rewrite", "respond"]
    )
    builder.add_edge("refine", "select")
    builder.add_conditional_edges("web_search", route_after_web, ["rewrite", "refine", "select"])
    builder.add_edge("rewrite", "route")
    builder.add_edge("select", "highlight")
    builder.add_edge("highlight", "answer")
    builder.add_conditional_edges("answer", route_after_answer, ["review_answer", "respond"])
    builder.add_edge("review_answer", "respond")
    builder.add_edge("respond", END)
    return builder


def compile_graph(checkpointer: Any = None) -> EntryCheckedGraph:
    """The graph compiled (with `checkpointer` when given), its runs' input and context checked on entry. The
    operator configuration is read here, so a mistake in it stops `langgraph dev` at start, naming the key."""
    operator()
    compiled = entry_checked(build_graph().compile(checkpointer=checkpointer))
    compiled.name = "cragraph"
    return compiled


graph = compile_graph()
