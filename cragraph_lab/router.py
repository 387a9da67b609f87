"""The `router` mode of `python -m cragraph_lab eval retrieval`: what the router chooses for each
question, escalation included.

The strategy comes from the same rules as the agent's strategy=auto (rag.retrieval.strategy); a multihop
choice runs the planning subgraph, any other runs the retrieve node's code (run_techniques with the strategy's
switches; full_document reads the best hits' documents whole). The first `retrieve_k` passages are graded with
the default evaluator and thresholds; an `incorrect` grade escalates one step along ESCALATION, at most
`max_retrieval_rounds` times, and the best-graded attempt is the one ranked (nodes.grade.best_attempt).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cragraph.evaluation.metrics import unique_in_order
from cragraph_lab.multihop import multihop_context, multihop_operator
from evaluators.base import grade
from evaluators.registry import load_evaluator
from nodes.grade import best_attempt
from rag.config import operator_config
from rag.retrieval.analysis import analyse
from rag.retrieval.full_document import whole_documents
from rag.retrieval.retriever import HybridRetriever
from rag.retrieval.strategy import (
    STRATEGY_FULL_DOCUMENT,
    STRATEGY_MULTIHOP,
    apply_strategy,
    choose_strategy,
    escalate,
)
from rag.retrieval.techniques import run_techniques
from stores.text import language_of
from stores.types import titled


def router_runner(retriever: HybridRetriever) -> Callable[[str], list[str]]:
    """question -> document ids of the router's best-graded attempt, best first."""
    from graph.multihop import multihop_graph

    settings = multihop_context(retriever.bundle, retriever.settings)
    evaluator = load_evaluator(settings.evaluator)
    config = multihop_operator(retriever.settings)
    techniques, graph = config.techniques, config.graph

    def attempt(question: str, strategy: dict[str, Any], analysis: Any) -> list[tuple[str, str]]:
        """(doc id, passage text as graded) of the attempt's passages, best first."""
        if strategy["name"] == STRATEGY_MULTIHOP:
            with operator_config(config):
                output = multihop_graph.invoke({"question": question}, context=settings)
            return [(p["doc_id"], titled(p.get("title") or "", p["text"])) for p in output.get("knowledge", [])]
        run = run_techniques(retriever, question, language_of(question), apply_strategy(techniques, strategy),
                             config.rerank.retrieve_k, analysis=analysis, graph=graph)
        hits = whole_documents(retriever, run.hits) if strategy["name"] == STRATEGY_FULL_DOCUMENT else run.hits
        return [(h.chunk.doc_id, h.chunk.passage) for h in hits]

    def run(question: str) -> list[str]:
        analysis = analyse(question, retriever.bundle.bm25)
        strategy: dict[str, Any] | None = choose_strategy(analysis, "auto")
        kept: dict[str, Any] | None = None
        for round_ in range(1 + max(0, settings.max_retrieval_rounds)):
            if strategy is None:
                break
            passages = attempt(question, strategy, analysis)
            scores = evaluator.score(question, [text for _, text in passages[: config.rerank.retrieve_k]])
            current = {"round": round_, "strategy": strategy["name"], "best": max(scores, default=-1.0),
                       "candidates": passages, "verdict": grade(scores, config.grade.upper, config.grade.lower)}
            kept = best_attempt(kept, current)
            if current["verdict"] != "incorrect":
                break
            strategy = escalate(strategy)
        return unique_in_order([doc_id for doc_id, _ in (kept or {}).get("candidates", [])])

    return run
