"""select: coverage-aware greedy choice of the context the answer may use (rag.knowledge.selection). After an
incorrect grade the web's passages replace the index's; without them, the index's are chosen from (graph.routes).

An index passage is represented by its stored chunk vector, refined or not (refinement only drops weak strips,
and re-embedding a passage is slow on a small CPU); web passages are embedded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from nodes._runtime import bundle_of, settings_of
from rag.config import operator
from rag.context import Context
from rag.knowledge.selection import facet_texts, greedy_coverage
from rag.knowledge.vectors import passage_vectors, query_vector
from rag.state import StageTimer, State


def select(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("select")
    settings, config = settings_of(runtime), operator().select
    pool = [*state.get("knowledge", []), *state.get("web_knowledge", [])]
    web = [p for p in pool if p.get("source") == "web"]
    if state.get("verdict") == "incorrect" and web:
        pool = web  # CRAG: internal passages judged wrong give way to the web's
    if not pool:
        return {"selected": [], "trace": [timer.record("nothing to select", {"pool": 0})]}
    bundle = bundle_of(settings)
    facets = facet_texts(state["question"], state.get("facets"))
    query = np.vstack([query_vector(bundle.embedder, text) for text in [state["question"], *facets]])
    vectors = passage_vectors(bundle, pool)
    chosen, gains = greedy_coverage(
        query,
        vectors,
        [len(p["text"]) for p in pool],
        config.alpha,
        config.budget_chars,
    )
    selected = [{**pool[i], "coverage_gain": round(g, 4)} for i, g in zip(chosen, gains, strict=True)]
    counts = {"pool": len(pool), "selected": len(selected), "chars": sum(len(p["text"]) for p in selected)}
    return {
        "selected": selected,
        "trace": [
            timer.record(
                f"selected {len(selected)} of {len(pool)}",
                counts,
                gains,
                f"alpha={config.alpha}, budget={config.budget_chars} chars"
                + (f", {len(facets)} facets" if facets else ""),
            )
        ],
    }
