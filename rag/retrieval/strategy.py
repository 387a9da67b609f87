"""Choosing how to retrieve: a strategy set that fits a latency budget, and a strategy for a given query.

Latency budget (`choose_for_budget`): three tiers of techniques, each a superset of the one before:
  tight   BM25 only.
  medium  hybrid (BM25 + dense query embedding + fusion) and cheap expansions: rule variants (multi_query),
          RM3 PRF, entity variants, query-class alpha, metadata boosts. Each variant searched densely costs
          another query embedding.
  loose   everything: medium plus rerank (dense / cross-encoder) and LLM expansions (rewrites, Query2Doc,
          HyDE).
The richest tier whose summed p50 estimate fits the budget wins. Estimates are the process's own measured
medians (`LatencyStats.record`) where there are any, else the documented priors in PRIOR_MS.

Recommendation (`recommend`), rules in order of precedence, each with a confidence in [0, 1]:
  full_document     the question asks for every item of a set ("list all ...", rag.retrieval.enumeration):
                    the whole documents of the best hits are read (0.9). Chosen in manual mode too.
  multihop          the rule planner (rag.planning.rules) finds a bridge or comparison shape (0.85).
  bm25              the query is an exact-token lookup: term-heavy, at most 4 index terms, and every term is
                    rare or a code / acronym (0.7).
  hybrid+expansion  a third or more of the query's terms are unknown to the index (misspelt, or worded
                    differently from the corpus): spelling and corpus-synonym variants can recover them (0.7).
  graph             two or more capitalised names / acronyms beyond the first word, making up at least a third
                    of the query's index terms: a query mostly about named things, whose passages the walk over
                    the entity-passage graph reaches from the best hits and those names (0.65). Chosen over
                    entity variants (the rule's earlier pick) by the training split of hipporag_legacy_train100
                    and XQuAD (cragraph_lab/notes/lab-notes.md, "Graph retrieval and the router").
  hybrid            everything else; 0.8 for a semantic query, 0.6 for a mixed one, 0.55 for term-heavy.
Every strategy a rule suggested but did not win becomes an alternative; "hybrid" is always an alternative of
a non-hybrid choice.

Escalation (`escalate`): when a round's grade says retrieval failed, the next round (rewrite -> retrieve) moves
one step along ESCALATION from the strategy that failed (dense -> hybrid -> graph -> comprehensive ->
full_document); the grade node keeps the best-graded round's passages, so a later, worse round never replaces
an earlier, better one.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from rag.retrieval.analysis import QueryAnalysis
from rag.retrieval.enumeration import enumeration_request
from rag.retrieval.techniques import TECHNIQUES, Techniques

# Techniques (the names LatencyStats records and StrategyChoice lists).
TECH_BM25 = "bm25"
TECH_DENSE = "dense"  # one query embedding + vector search
TECH_FUSION = "fusion"
TECH_RULE_VARIANTS = "multi_query"  # the names stores/techniques.TECHNIQUES uses
TECH_PRF = "prf"
TECH_ENTITIES = "entities"
TECH_QUERY_CLASS_ALPHA = "query_class_alpha"
TECH_METADATA_BOOST = "metadata_boost"
TECH_RERANK = "rerank"
TECH_QUERY2DOC = "query2doc"
TECH_HYDE = "hyde"
TECH_LLM_EXPANSION = "llm_expansion"  # LLM rewrites in understand
TECH_GRAPH = "graph"  # personalized PageRank over the entity-passage graph

# Budget tiers.
TIER_TIGHT = "tight"
TIER_MEDIUM = "medium"
TIER_LOOSE = "loose"
TIER_TECHNIQUES: dict[str, tuple[str, ...]] = {
    TIER_TIGHT: (TECH_BM25,),
    TIER_MEDIUM: (TECH_BM25, TECH_DENSE, TECH_FUSION, TECH_RULE_VARIANTS, TECH_PRF, TECH_ENTITIES,
                  TECH_QUERY_CLASS_ALPHA, TECH_METADATA_BOOST, TECH_GRAPH),
    TIER_LOOSE: (TECH_BM25, TECH_DENSE, TECH_FUSION, TECH_RULE_VARIANTS, TECH_PRF, TECH_ENTITIES,
                 TECH_QUERY_CLASS_ALPHA, TECH_METADATA_BOOST, TECH_GRAPH, TECH_RERANK, TECH_LLM_EXPANSION,
                 TECH_QUERY2DOC, TECH_HYDE),
}

# Strategies (what `recommend` returns and strategy='auto' resolves to).
STRATEGY_BM25 = "bm25"
STRATEGY_HYBRID = "hybrid"
STRATEGY_HYBRID_EXPANSION = "hybrid+expansion"
STRATEGY_MULTIHOP = "multihop"
STRATEGY_DENSE = "dense"
STRATEGY_GRAPH = "graph"
STRATEGY_COMPREHENSIVE = "comprehensive"
STRATEGY_FULL_DOCUMENT = "full_document"
# The order a failed retrieval escalates in; a strategy not in it (bm25, hybrid+...) escalates as hybrid does.
ESCALATION: tuple[str, ...] = (STRATEGY_DENSE, STRATEGY_HYBRID, STRATEGY_GRAPH, STRATEGY_COMPREHENSIVE,
                               STRATEGY_FULL_DOCUMENT)

# Priors (ms, one question, this project's 2-core CPU) used until a technique has been measured:
#   bm25 0.1 ms at 2k chunks (data/README), a few ms at 100k -> 2; dense: e5-small query embedding ~25-30 ms
#   plus flat search (data/README: e5 dense 30 ms); fusion over two 100-lists ~2; rule variants (lexicon
#   lookups, NPMI over the postings of mid-frequency terms) ~5; RM3 (a BM25 pass + term counts of 5 docs) ~3;
#   entity extraction with the small spaCy / natasha models ~15; query features + class 0.3 (measured 0.29 on
#   hotpotqa questions); metadata boosts ~1; rerank of a 30-passage pool with a cross-encoder on CPU ~300; an
#   LLM expansion (rewrites, Query2Doc or HyDE, each one generation plus one embedding) with the embedded
#   SmolLM2 ~2000. Measured here: rule variants p50 6.7 ms (p95 14) and RM3 + weighted BM25 0.4 ms on
#   hotpotqa_migres200 (2,174 chunks).
PRIOR_MS: dict[str, float] = {
    TECH_BM25: 2.0,
    TECH_DENSE: 30.0,
    TECH_FUSION: 2.0,
    TECH_RULE_VARIANTS: 5.0,
    TECH_PRF: 3.0,
    TECH_ENTITIES: 15.0,
    TECH_QUERY_CLASS_ALPHA: 0.3,
    TECH_METADATA_BOOST: 1.0,
    TECH_RERANK: 300.0,
    TECH_LLM_EXPANSION: 2000.0,
    TECH_QUERY2DOC: 2000.0,
    TECH_HYDE: 2000.0,
    TECH_GRAPH: 10.0,
}


class LatencyStats:
    """Rolling per-technique latencies of this process (thread-safe); medians over the last `window` runs."""

    def __init__(self, window: int = 200, priors: dict[str, float] | None = None) -> None:
        self.window = window
        self.priors = dict(PRIOR_MS if priors is None else priors)
        self._samples: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def record(self, name: str, ms: float) -> None:
        if ms < 0:
            raise ValueError(f"latency of {name!r} is negative ({ms} ms)")
        with self._lock:
            self._samples.setdefault(name, deque(maxlen=self.window)).append(float(ms))

    def p50(self, name: str) -> float | None:
        """The measured median, or None before `name` has been measured."""
        with self._lock:
            samples = list(self._samples.get(name, ()))
        return statistics.median(samples) if samples else None

    def count(self, name: str) -> int:
        with self._lock:
            return len(self._samples.get(name, ()))

    def estimate(self, name: str) -> tuple[float, str]:
        """(ms, 'measured' | 'prior') for a technique; an unknown technique with no samples is an error."""
        measured = self.p50(name)
        if measured is not None:
            return measured, "measured"
        if name not in self.priors:
            raise KeyError(f"no latency measured or assumed for {name!r}")
        return self.priors[name], "prior"

    def clear(self) -> None:
        with self._lock:
            self._samples.clear()


LATENCY_STATS = LatencyStats()  # the process-wide instance the graph records into


@dataclass(frozen=True)
class StrategyChoice:
    tier: str
    techniques: tuple[str, ...]
    estimated_ms: float
    budget_ms: float | None
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "techniques": list(self.techniques)}


def choose_for_budget(budget_ms: float | None, stats: LatencyStats | None = None) -> StrategyChoice:
    """The richest tier whose summed p50 estimates fit `budget_ms` (None: no budget, loose)."""
    stats = stats or LATENCY_STATS
    totals: dict[str, float] = {}
    parts: dict[str, str] = {}
    for tier, techniques in TIER_TECHNIQUES.items():
        estimates = [(name, *stats.estimate(name)) for name in techniques]
        totals[tier] = sum(ms for _, ms, _ in estimates)
        parts[tier] = " + ".join(f"{name} {ms:.1f}" + ("" if source == "measured" else " (prior)")
                                 for name, ms, source in estimates)
    if budget_ms is None:
        tier = TIER_LOOSE
        reason = f"no latency budget: loose tier, estimated {totals[tier]:.1f} ms = {parts[tier]}"
    else:
        fitting = [t for t in (TIER_LOOSE, TIER_MEDIUM, TIER_TIGHT) if totals[t] <= budget_ms]
        tier = fitting[0] if fitting else TIER_TIGHT
        if not fitting:
            reason = (f"budget {budget_ms:g} ms is below even BM25's estimate ({parts[tier]} ms): "
                      "tight tier anyway")
        else:
            reason = f"budget {budget_ms:g} ms fits {tier}: {parts[tier]} = {totals[tier]:.1f} ms"
            richer = {TIER_TIGHT: TIER_MEDIUM, TIER_MEDIUM: TIER_LOOSE}.get(tier)
            if richer:
                reason += f"; {richer} would need {totals[richer]:.1f} ms"
    return StrategyChoice(tier, TIER_TECHNIQUES[tier], round(totals[tier], 3), budget_ms, reason)


@dataclass(frozen=True)
class Recommendation:
    strategy: str
    confidence: float
    reason: str
    alternatives: list[tuple[str, float, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"strategy": self.strategy, "confidence": self.confidence, "reason": self.reason,
                "alternatives": [list(a) for a in self.alternatives]}


def recommend(analysis: QueryAnalysis) -> Recommendation:
    """A strategy for the analysed query, by the rules in the module docstring; runs no retrieval."""
    features, cls = analysis.features, analysis.query_class
    proposals: list[tuple[str, float, str]] = []
    request = enumeration_request(analysis.text)
    if request:
        proposals.append((STRATEGY_FULL_DOCUMENT, 0.9, f"enumeration question ({request!r}): read whole documents"))
    plan = analysis.decomposition
    if plan is not None:
        hops = len(plan.sub_questions)
        proposals.append((STRATEGY_MULTIHOP, 0.85, f"multi-hop shape: the rule planner splits it into {hops} "
                                                   "sub-questions"))
    exact_tokens = features.acronyms + features.codes
    if cls == "term-heavy" and features.n_terms <= 4 and (features.rare_term_ratio >= 0.99 or exact_tokens):
        proposals.append((STRATEGY_BM25, 0.7, f"exact-token lookup: {features.n_terms} terms, rare share "
                                              f"{features.rare_term_ratio:.2f}, {exact_tokens} codes/acronyms"))
    if features.oov_ratio >= 1 / 3:
        proposals.append((STRATEGY_HYBRID_EXPANSION, 0.7, f"{features.oov_ratio:.0%} of the query's terms are "
                                                          "not in the index: spelling / synonym variants"))
    names = features.capitalized + features.acronyms
    if names >= 2 and names >= features.n_terms / 3:
        proposals.append((STRATEGY_GRAPH, 0.65, f"{names} names in the query: walk the entity-passage graph"))
    hybrid_confidence = {"semantic": 0.8, "mixed": 0.6, "term-heavy": 0.55}[cls]
    hybrid = (STRATEGY_HYBRID, hybrid_confidence, f"{cls} query: BM25 + dense, fused as retrieval_fusion says")
    best = proposals[0] if proposals else hybrid
    alternatives = [p for p in proposals[1:]]
    if best[0] != STRATEGY_HYBRID:
        alternatives.append((hybrid[0], round(min(hybrid[1], best[1] - 0.05), 2), hybrid[2]))
    alternatives.sort(key=lambda a: -a[1])
    return Recommendation(best[0], best[1], best[2], alternatives)


# What each recommended strategy switches on (beyond Context), and the retrieval mode it implies.
STRATEGY_TECHNIQUES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "bm25": ("bm25", ()),
    "hybrid": (None, ()),
    "hybrid+expansion": (None, ("multi_query", "prf")),
    "multihop": (None, ()),
    "dense": ("dense", ()),
    "graph": (None, ("graph",)),
    "comprehensive": (None, ("multi_query", "prf", "entities")),
    "full_document": (None, ()),
}


def choose_strategy(analysis: QueryAnalysis, kind: str = "manual", latency_budget_ms: float = 0.0,
                    ) -> dict[str, Any]:
    """The strategy for one question: `kind` manual (the caller's switches) or auto (recommended from the
    question's features), capped by the tier a latency budget allows (0 = no budget).

    The result is a JSON-able dict kept in state and returned in the output:
    {"name", "reason", "confidence", "alternatives", "tier", "mode", "enable", "allowed", "rerank"}.
    `enable` lists techniques the strategy switches on beyond the caller's; `allowed` caps what may run
    (None = no cap); `mode` overrides the retrieval mode when set; `rerank` False skips reranking.
    """
    if kind not in ("manual", "auto"):
        raise ValueError(f"strategy must be manual or auto, not {kind!r}")
    strategy: dict[str, Any] = {"name": "manual", "reason": "Context switches", "confidence": 1.0,
                                "alternatives": [], "tier": None, "mode": None, "enable": [], "allowed": None,
                                "rerank": True}
    if kind == "auto" or enumeration_request(analysis.text):
        strategy.update(recommendation(analysis))
    if latency_budget_ms and latency_budget_ms > 0:
        choice = choose_for_budget(latency_budget_ms, LATENCY_STATS)
        strategy["tier"] = choice.tier
        strategy["reason"] = f"{strategy['reason']}; budget: {choice.reason}"
        strategy["allowed"] = sorted(set(choice.techniques) & set(TECHNIQUES))
        strategy["rerank"] = TECH_RERANK in choice.techniques
        if TECH_DENSE not in choice.techniques:
            strategy["mode"] = "bm25"
    return strategy


def recommendation(analysis: QueryAnalysis) -> dict[str, Any]:
    """strategy=auto's pick for the question, with a confidence, a reason and the alternatives."""
    picked = recommend(analysis)
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


def escalate(strategy: dict[str, Any]) -> dict[str, Any] | None:
    """The strategy one step further along ESCALATION than `strategy` (None at the end of the chain); it keeps
    the latency tier's cap."""
    name = strategy.get("name", STRATEGY_HYBRID)
    position = ESCALATION.index(name if name in ESCALATION else STRATEGY_HYBRID)
    if position + 1 >= len(ESCALATION):
        return None
    following = ESCALATION[position + 1]
    mode, enable = STRATEGY_TECHNIQUES[following]
    return {**strategy, "name": following, "mode": mode, "enable": list(enable), "confidence": None,
            "reason": f"escalated from {name}: its passages were graded too weak", "alternatives": []}


def apply_strategy(techniques: Techniques, strategy: dict[str, Any]) -> Techniques:
    """The caller's techniques plus what the strategy enables, minus what its tier does not allow."""
    switches = {name: True for name in strategy.get("enable", [])}
    allowed = strategy.get("allowed")
    if allowed is not None:
        switches.update({name: False for name in TECHNIQUES if name not in allowed})
    if not switches.pop("metadata_boost", True):  # not a switch of its own: its specs are dropped instead
        techniques = replace(techniques, metadata_boost={}, category_boost=False)
    return techniques.switched(**switches)
