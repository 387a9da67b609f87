"""The `multihop` mode of `python -m cragraph_lab eval retrieval`: the planning subgraph's evidence as ranked documents.

The runner invokes the compiled multi-hop subgraph (the code path the agent runs) and ranks the documents of
the evidence it hands to selection, best first: what it gathers is counted at k=5 and k=10 as one list, never
as a union of lists. `python -m cragraph_lab eval retrieval --dataset DIR --modes hybrid,multihop` compares it with
single-step hybrid retrieval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cragraph.evaluation.metrics import unique_in_order
from rag.retrieval.retriever import RetrievalSettings
from stores.backend import Index


def multihop_context(
    bundle: Index, settings: RetrievalSettings | None = None, multihop: Any = None, **overrides: Any
) -> Any:
    """A Context over `bundle`; `multihop_operator` gives the settings the plan runs with."""
    from rag.context import Context

    return Context(index=str(bundle.path), **overrides)


def multihop_operator(settings: RetrievalSettings | None = None, multihop: Any = None) -> Any:
    """The operator configuration searching with exactly `settings` (so the baseline and the plan agree)."""
    from dataclasses import replace

    from rag.config import operator

    config = replace(operator(), retrieval=settings or RetrievalSettings())
    return replace(config, multihop=multihop) if multihop is not None else config


def multihop_runner(
    bundle: Index,
    settings: RetrievalSettings | None = None,
    multihop: Any = None,
    **context_overrides: Any,
) -> Callable[[str], list[str]]:
    """question -> document ids of the multi-hop evidence, best first. `multihop` is a MultihopSettings;
    `context_overrides` are further Context fields (e.g. chat_model=...)."""
    from graph.multihop import multihop_graph
    from rag.config import operator_config

    context = multihop_context(bundle, settings, multihop, **context_overrides)
    config = multihop_operator(settings, multihop)

    def run(question: str) -> list[str]:
        with operator_config(config):
            output = multihop_graph.invoke({"question": question}, context=context)
        return unique_in_order([p["doc_id"] for p in output.get("knowledge", [])])

    return run
