"""The `multihop` mode of `cragraph eval retrieval`: the planning subgraph's evidence as ranked documents.

The runner invokes the compiled multi-hop subgraph (the code path the agent runs) and ranks the documents of
the evidence it hands to selection, best first: what it gathers is counted at k=5 and k=10 as one list, never
as a union of lists. `cragraph eval retrieval --dataset DIR --modes hybrid,multihop` compares it with
single-step hybrid retrieval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cragraph.evaluation.metrics import unique_in_order
from cragraph.retrieval.retriever import RetrievalSettings
from cragraph.settings import prefixed
from stores.backend import Index


def multihop_context(
    bundle: Index, settings: RetrievalSettings | None = None, multihop: Any = None, **overrides: Any
) -> Any:
    """A Context searching `bundle` with exactly `settings` (so the baseline and the plan agree)."""
    from cragraph.context import Context
    from cragraph.planning.settings import PREFIX

    values: dict[str, Any] = {"index": str(bundle.path),
                              **prefixed(settings or RetrievalSettings(), "retrieval_")}
    if multihop is not None:
        values.update(prefixed(multihop, PREFIX))
    values.update(overrides)
    return Context(**values)


def multihop_runner(
    bundle: Index,
    settings: RetrievalSettings | None = None,
    multihop: Any = None,
    **context_overrides: Any,
) -> Callable[[str], list[str]]:
    """question -> document ids of the multi-hop evidence, best first. `multihop` is a MultihopSettings;
    `context_overrides` are further Context fields (e.g. chat_model=...)."""
    from graph.multihop import multihop_graph

    context = multihop_context(bundle, settings, multihop, **context_overrides)

    def run(question: str) -> list[str]:
        output = multihop_graph.invoke({"question": question}, context=context)
        return unique_in_order([p["doc_id"] for p in output.get("knowledge", [])])

    return run
