"""select: coverage-aware greedy choice of the context the answer may use.

coverage(C) = a * cos(q, mean(C)) + (1 - a) * max_i cos(q, c_i), averaged over the question and, for a multi-hop
plan, each sub-question (facet). Starting from nothing, the passage with the
best marginal gain is added until the best gain is under `select_min_gain` or the next passage would pass the
context budget (characters). The mean term rewards passages that together point at the question (facets of a
multi-hop question); the max term keeps the single best passage in. An index passage is represented by its
stored chunk vector, refined or not (refinement only drops weak strips, and re-embedding costs ~150 ms a
passage on a small CPU); web passages are embedded.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from graph.context import Context
from nodes.common import bundle_of, chunk_rows, passage_text, query_vector, settings_of
from nodes.trace import StageTimer


def select(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("select")
    settings = settings_of(runtime)
    pool = [*state.get("knowledge", []), *state.get("web_knowledge", [])]
    if state.get("verdict") == "incorrect":
        pool = [
            p for p in pool if p.get("source") == "web"
        ]  # CRAG: internal passages judged wrong are discarded
    if not pool:
        return {"selected": [], "trace": [timer.record("nothing to select", {"pool": 0})]}
    bundle = bundle_of(settings)
    facets = facet_texts(state)
    query = np.vstack([query_vector(bundle.embedder, text) for text in [state["question"], *facets]])
    vectors = passage_vectors(bundle, pool)
    chosen, gains = greedy_coverage(
        query,
        vectors,
        [len(p["text"]) for p in pool],
        settings.select_alpha,
        settings.select_min_gain,
        settings.context_budget_chars,
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
                f"alpha={settings.select_alpha}, budget={settings.context_budget_chars} chars"
                + (f", {len(facets)} facets" if facets else ""),
            )
        ],
    }


def passage_vectors(bundle: Any, pool: list[dict[str, Any]]) -> np.ndarray:
    stored = [i for i, p in enumerate(pool) if p.get("source") == "index"]
    vectors = np.zeros((len(pool), bundle.embedder.dim), dtype=np.float32)
    if stored:
        vectors[stored] = bundle.dense.vectors_for(chunk_rows(bundle, [pool[i]["id"] for i in stored]))
    others = [i for i in range(len(pool)) if i not in set(stored)]
    if others:
        vectors[others] = bundle.embedder.embed_passages([passage_text(pool[i]) for i in others])
    return vectors


def facet_texts(state: dict[str, Any]) -> list[str]:
    """Sub-questions of a multi-hop plan, slots removed: selection must cover each of them, not only the
    question."""
    facets = [" ".join(re.sub(r"\{\w+\}", " ", f).split()) for f in state.get("facets") or []]
    return [f for f in dict.fromkeys(facets) if f and f != state["question"]]


def coverage(query: np.ndarray, vectors: np.ndarray, alpha: float) -> float:
    """a * cos(q, mean(C)) + (1 - a) * max_i cos(q, c_i) for unit vectors, averaged over the rows of `query`
    when it holds several facets; 0 for an empty set."""
    if not len(vectors):
        return 0.0
    queries = np.atleast_2d(query)
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    mean_cos = queries @ mean / norm if norm > 0 else np.zeros(len(queries))
    max_cos = (vectors @ queries.T).max(axis=0)
    return float(np.mean(alpha * mean_cos + (1.0 - alpha) * max_cos))


def greedy_coverage(
    query: np.ndarray,
    vectors: np.ndarray,
    lengths: list[int],
    alpha: float,
    min_gain: float,
    budget_chars: int,
) -> tuple[list[int], list[float]]:
    """Indices chosen in order and each one's marginal gain. The first pick is always allowed if it fits."""
    chosen: list[int] = []
    gains: list[float] = []
    used, current = 0, 0.0
    while True:
        best, best_gain = None, -np.inf
        for i in range(len(vectors)):
            if i in chosen or used + lengths[i] > budget_chars:
                continue
            gain = coverage(query, vectors[[*chosen, i]], alpha) - current
            if gain > best_gain:
                best, best_gain = i, gain
        if best is None or (chosen and best_gain < min_gain):
            return chosen, gains
        chosen.append(best)
        gains.append(float(best_gain))
        used += lengths[best]
        current += best_gain
