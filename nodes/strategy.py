"""Which retrieval techniques may run for a question: strategy=auto's pick and a latency budget's tier.

The result is a JSON-able dict kept in state and returned in the output:
{"name", "reason", "confidence", "alternatives", "tier", "mode", "enable", "allowed", "rerank"}.
`enable` lists techniques the strategy switches on beyond Context's switches; `allowed` caps what may run
(None = no cap); `rerank` False skips the rerank node. Latencies measured by the nodes of this process feed
the budget choice (stores/strategy.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from graph.context import Context
from stores.bundle import IndexBundle
from stores.query_features import query_features
from stores.strategy import LATENCY_STATS, TECH_DENSE, TECH_RERANK, choose_for_budget, recommend
from stores.techniques import TECHNIQUES, Techniques

PROCESS_LATENCY = LATENCY_STATS

# What each recommended strategy switches on (beyond Context), and the retrieval mode it implies.
STRATEGY_TECHNIQUES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "bm25": ("bm25", ()),
    "hybrid": (None, ()),
    "hybrid+expansion": (None, ("multi_query", "prf")),
    "hybrid+entities": (None, ("entities",)),
    "multihop": (None, ()),
}


def choose_strategy(question: str, settings: Context, bundle: IndexBundle) -> dict[str, Any]:
    """The strategy for one question from Context.strategy and Context.latency_budget_ms."""
    if settings.strategy not in ("manual", "auto"):
        raise ValueError(f"Context.strategy must be manual or auto, not {settings.strategy!r}")
    strategy: dict[str, Any] = {"name": "manual", "reason": "Context switches", "confidence": 1.0,
                                "alternatives": [], "tier": None, "mode": None, "enable": [], "allowed": None,
                                "rerank": True}
    if settings.strategy == "auto":
        strategy.update(recommendation(question, bundle))
    if settings.latency_budget_ms and settings.latency_budget_ms > 0:
        choice = choose_for_budget(settings.latency_budget_ms, PROCESS_LATENCY)
        strategy["tier"] = choice.tier
        strategy["reason"] = f"{strategy['reason']}; budget: {choice.reason}"
        strategy["allowed"] = sorted(set(choice.techniques) & set(TECHNIQUES))
        strategy["rerank"] = TECH_RERANK in choice.techniques
        if TECH_DENSE not in choice.techniques:
            strategy["mode"] = "bm25"
    return strategy


def recommendation(question: str, bundle: IndexBundle) -> dict[str, Any]:
    """strategy=auto's pick for the question, with a confidence, a reason and the alternatives."""
    picked = recommend(question, query_features(question, bundle.bm25))
    mode, enable = STRATEGY_TECHNIQUES[picked.strategy]
    return {
        "name": picked.strategy,
        "reason": picked.reason,
        "confidence": round(float(picked.confidence), 3),
        "alternatives": [
            {"name": name, "confidence": round(float(confidence), 3), "reason": reason}
            for name, confidence, reason in picked.alternatives
        ],
        "mode": mode,
        "enable": list(enable),
    }


def apply_strategy(techniques: Techniques, strategy: dict[str, Any]) -> Techniques:
    """Context's techniques plus what the strategy enables, minus what its tier does not allow."""
    switches = {name: True for name in strategy.get("enable", [])}
    allowed = strategy.get("allowed")
    if allowed is not None:
        switches.update({name: False for name in TECHNIQUES if name not in allowed})
    if not switches.pop("metadata_boost", True):  # not a switch of its own: its specs are dropped instead
        techniques = replace(techniques, metadata_boost={}, category_boost=False)
    return replace(techniques, mode=strategy.get("mode") or techniques.mode, **switches)
