"""Retrieval metrics over ranked document ids (R@k, AllGold@k, MRR, nDCG@k) and latency percentiles."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def recall_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Fraction of the gold ids found in the first k."""
    gold_set = set(gold)
    return len(gold_set & set(ranked[:k])) / len(gold_set) if gold_set else 0.0


def all_gold_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """1.0 when every gold id is in the first k."""
    return float(bool(gold) and set(gold) <= set(ranked[:k]))


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str], k: int = 10) -> float:
    """1 / rank of the first gold id within the first k, else 0 (MRR@k averages this)."""
    gold_set = set(gold)
    for rank, doc in enumerate(ranked[:k], start=1):
        if doc in gold_set:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Sequence[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k (BEIR's measure on qrels with one grade): DCG of the gold hits over the ideal."""
    gold_set = set(gold)
    dcg = sum(1.0 / np.log2(rank + 1) for rank, doc in enumerate(ranked[:k], start=1) if doc in gold_set)
    ideal = sum(1.0 / np.log2(rank + 1) for rank in range(1, min(len(gold_set), k) + 1))
    return float(dcg / ideal) if ideal else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def unique_in_order(ids: Sequence[str]) -> list[str]:
    """Chunk hits map to documents; a document counts at the rank of its best chunk."""
    return list(dict.fromkeys(ids))
