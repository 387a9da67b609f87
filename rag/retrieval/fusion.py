"""Fusing ranked lists from BM25 and dense search.

Reciprocal rank fusion uses 1-based ranks and only the ranks a list actually has: a document missing from a list
gets nothing from it (no synthetic rank). Score fusion min-max normalizes each list over its own candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np

Key = TypeVar("Key", int, str)
"""What a list ranks: docstore rows, or chunk ids."""


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[Key]], k: int = 60, weights: Sequence[float] | None = None
) -> dict[Key, float]:
    """sum_l w_l / (k + rank_l(d)) over the lists that contain d."""
    weights = weights if weights is not None else [1.0] * len(ranked_lists)
    fused: dict[Key, float] = {}
    for ranked, weight in zip(ranked_lists, weights, strict=True):
        for rank, doc in enumerate(ranked, start=1):
            fused[doc] = fused.get(doc, 0.0) + weight / (k + rank)
    return fused


def minmax(scores: Mapping[int, float]) -> dict[int, float]:
    """Scale a list's scores to [0, 1] over its own candidates (a constant list maps to 1)."""
    if not scores:
        return {}
    values = np.fromiter(scores.values(), dtype=float)
    low, high = values.min(), values.max()
    span = high - low
    return {doc: (s - low) / span if span > 0 else 1.0 for doc, s in scores.items()}


def weighted_score_fusion(lists: Sequence[Mapping[int, float]], weights: Sequence[float]) -> dict[int, float]:
    """sum_l w_l * minmax_l(d); a document missing from a list gets 0 from it."""
    fused: dict[int, float] = {}
    for scores, weight in zip(lists, weights, strict=True):
        for doc, value in minmax(scores).items():
            fused[doc] = fused.get(doc, 0.0) + weight * value
    return fused


def ranked(fused: Mapping[Key, float]) -> list[Key]:
    """Documents by fused score, ties broken by id so runs are reproducible."""
    return sorted(fused, key=lambda doc: (-fused[doc], doc))
