"""Coverage-aware selection of the context the answer may use.

coverage(C) = a * cos(q, mean(C)) + (1 - a) * max_i cos(q, c_i), averaged over the question and, for a multi-hop
plan, each sub-question (facet). Starting from nothing, the passage with the best marginal gain is added until
no further passage fits the context budget (characters). The mean term
rewards passages that together point at the question (facets of a multi-hop question); the max term keeps the
single best passage in.
"""

from __future__ import annotations

import re

import numpy as np


def facet_texts(question: str, facets: list[str] | None) -> list[str]:
    """Sub-questions of a multi-hop plan, slots removed and the question itself left out: selection must cover
    each of them, not only the question."""
    cleaned = [" ".join(re.sub(r"\{\w+\}", " ", f).split()) for f in facets or []]
    return [f for f in dict.fromkeys(cleaned) if f and f != question]


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
        if best is None:
            return chosen, gains
        chosen.append(best)
        gains.append(float(best_gain))
        used += lengths[best]
        current += best_gain
