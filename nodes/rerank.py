"""rerank: reorder the retrieved pool by dense cosine to the question, using the vectors stored in the index.

No passage is re-embedded. The fused retrieval score, min-max normalized, is added with a small weight so
lexical evidence still breaks near-ties. An optional cross-encoder then rescores a bounded pool and drops
passages under its threshold.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from evaluators.registry import load_evaluator
from nodes._runtime import bundle_of, settings_of
from rag.config import operator
from rag.config.sections import RerankSettings
from rag.context import Context
from rag.knowledge.passages import passage_text
from rag.knowledge.vectors import stored_cosines
from rag.retrieval.strategy import LATENCY_STATS
from rag.state import StageTimer, State


def rerank(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("rerank")
    settings, config = settings_of(runtime), operator().rerank
    pool = list(state.get("hits", []))
    note = None
    allowed = (state.get("strategy") or {}).get("rerank", True)
    if not allowed:
        note = f"rerank skipped: {(state.get('strategy') or {}).get('reason', 'strategy')}"
    if pool and config.enabled and allowed:
        bundle = bundle_of(settings)
        cosines = stored_cosines(bundle, state["question"], pool)
        fused = np.array([p["score"] for p in pool], dtype=np.float64)
        span = fused.max() - fused.min()
        normalized = (fused - fused.min()) / span if span > 0 else np.ones_like(fused)
        combined = cosines + config.fused_weight * normalized
        pool = [
            {**p, "scores": {**p["scores"], "rerank_cosine": float(c)}, "rerank_score": float(s)}
            for p, c, s in zip(pool, cosines, combined, strict=True)
        ]
        pool.sort(key=lambda p: -p["rerank_score"])
    if pool and config.cross_encoder:
        pool, note = cross_encode(state["question"], pool, config)
    kept = pool[: config.k]
    decision = f"kept {len(kept)} of {len(state.get('hits', []))}" + (" (dense)" if config.enabled and allowed else "")
    update: dict[str, Any] = {"candidates": kept}
    if settings.debug:
        update["debug"] = {"rerank": [{"id": p["id"], "rerank_score": p.get("rerank_score")} for p in pool]}
    scores = [p.get("rerank_score", p["score"]) for p in kept]
    record = timer.record(decision, {"pool": len(state.get("hits", [])), "kept": len(kept)}, scores, note)
    if config.enabled and allowed:
        LATENCY_STATS.record("rerank", record["duration_ms"])
    update["trace"] = [record]
    return update


def cross_encode(
    question: str, pool: list[dict[str, Any]], settings: RerankSettings
) -> tuple[list[dict[str, Any]], str]:
    """Cross-encoder scores for the first `cross_encoder_pool` passages; those under the threshold dropped."""
    bounded = pool[: settings.cross_encoder_pool]
    evaluator = load_evaluator(settings.cross_encoder)
    scores = evaluator.score(question, [passage_text(p) for p in bounded])
    scored = [
        {**p, "scores": {**p["scores"], "cross_encoder": s}, "rerank_score": s}
        for p, s in zip(bounded, scores, strict=True)
        if s >= settings.cross_encoder_threshold
    ]
    scored.sort(key=lambda p: -p["rerank_score"])
    return scored, (
        f"cross-encoder {evaluator.name} kept {len(scored)} of {len(bounded)} "
        f"(threshold {settings.cross_encoder_threshold})"
    )
