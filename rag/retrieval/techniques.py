"""Retrieval techniques around the hybrid retriever, run as one switched set that says what ran and why.

The base list is `HybridRetriever.search` over the question and its given variants (score fusion). Techniques
either change how the base list is made (a dense weight from the query's class) or add ranked lists: rule
variants, an RM3 expansion, the entity field, a Query2Doc query, a HyDE vector. Added lists are fused with the
base list by min-max score fusion (the base list weighs 1, each added list `technique_weight`). Reciprocal rank
fusion was measured worse here: it throws away the base list's score gaps, so even a 0.1-weighted entity list
reordered confident top hits (hotpotqa R@5 .865 -> .850; score fusion .868). Metadata
boosts multiply the final score of matching chunks. Query2Doc and HyDE are gated: they run only when the first
pass is weak (its best dense cosine under `expansion_gate`) or the caller says the evaluator found it weak.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from rag.retrieval.analysis import QueryAnalysis, analyse
from rag.retrieval.fusion import ranked, weighted_score_fusion
from rag.retrieval.graph_walk import GraphSettings, graph_rerank
from rag.retrieval.metadata import CategoryPredictor, apply_boosts, metadata_boosts
from rag.retrieval.multi_query import rule_variants
from rag.retrieval.prf import rm3_expansion
from rag.retrieval.query_features import alpha_for
from rag.retrieval.retriever import HybridRetriever
from rag.settings import setting
from stores.ner import query_entities
from stores.types import Hit

# Writes a pseudo document for ("query2doc" | "hyde", question, language); None or an exception when it cannot.
PseudoDocWriter = Callable[[str, str, str], str | None]


@dataclass
class Techniques:
    """Which techniques run and their parameters. A switch's `technique` metadata is the technique's name in
    traces, strategies and ablations."""

    entity_retrieval: bool = setting(
        False, "Search the index's entity field with the question's entities (only when it names some).",
        technique="entities",
    )
    multi_query: bool = setting(
        False, "Rule-based variants (corpus-vocabulary synonyms, spelling fixes, keywords), each searched and fused "
        "in with technique_weight.", technique="multi_query",
    )
    multi_query_max: int = setting(3, "Most rule-based variants.")
    prf: bool = setting(
        False, "RM3 pseudo-relevance feedback: expansion terms from a BM25 first pass.", technique="prf"
    )
    prf_docs: int = setting(5, "Top first-pass passages RM3 takes terms from.")
    prf_terms: int = setting(10, "RM3 expansion terms.")
    prf_original_weight: float = setting(0.5, "RM3 interpolation weight of the original query terms.")
    query_class_alpha: bool = setting(
        False, "Dense weight from the query's class (term-heavy / semantic / mixed, from cheap features) instead "
        "of the fusion's own rule.", technique="query_class_alpha",
    )
    class_alphas: dict[str, float] = setting(
        {}, "Dense weight per query class (term-heavy, semantic, mixed); empty = the measured defaults."
    )
    query2doc: bool = setting(
        False, "Gated Query2Doc: an LLM pseudo document appended to the query when the first pass is weak.",
        technique="query2doc",
    )
    hyde: bool = setting(
        False, "Gated HyDE: search with the question's vector plus a hypothetical passage's when the first pass "
        "is weak.", technique="hyde",
    )
    expansion_gate: float = setting(
        0.83, "Query2Doc / HyDE run when the first pass's best dense cosine is below this (or a regrade failed)."
    )
    metadata_boost: dict[str, Any] = setting(
        {}, "Boost chunks whose metadata matches, e.g. {\"category\": {\"prefix\": \"cs.\"}, "
        "\"date\": {\"gte\": \"2020\"}}; same syntax as filters."
    )
    metadata_boost_weight: float = setting(
        0.3, "A chunk's score is multiplied by 1 + this for each boost spec it matches (unless the spec has a weight)."
    )
    category_boost: bool = setting(
        False, "Predict the question's category from the corpus' own metadata and boost it when confident."
    )
    category_key: str = setting("category", "Metadata key holding the category (prefixes count: cs.AI in cs).")
    category_min_confidence: float = setting(0.5, "Predicted categories below this confidence are not boosted.")
    technique_weight: float = setting(
        0.1, "Score-fusion weight of each list a technique adds, against 1 for the hybrid list."
    )
    graph_walk: bool = setting(
        False, "Re-rank the fused list by personalized PageRank over the index's entity-passage graph (seeded "
        "from its best passages and the question's entities; graph_* settings).", technique="graph",
    )

    def switched_on(self) -> list[str]:
        on = [name for name in TECHNIQUES if name != "metadata_boost" and getattr(self, SWITCHES[name])]
        return on + (["metadata_boost"] if self.metadata_boost or self.category_boost else [])

    def switched(self, **on: bool) -> Techniques:
        """A copy with the named techniques (by technique name) switched on or off."""
        switches: dict[str, Any] = {SWITCHES[name]: value for name, value in on.items()}
        return replace(self, **switches)


# technique name -> its switch field, from the fields' metadata; metadata boosts switch by their specs
SWITCHES = {f.metadata["technique"]: f.name for f in fields(Techniques) if "technique" in f.metadata}
TECHNIQUES = (*SWITCHES, "metadata_boost")


@dataclass
class TechniqueRun:
    """The fused hits and an account of the run: what ran, what was skipped and why, time per technique."""

    hits: list[Hit]
    applied: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    query_class: str | None = None

    def timed(self, name: str, started: float) -> None:
        """Record the milliseconds since `started` under `name` (the names stores.strategy budgets with)."""
        self.timings_ms[name] = round((time.perf_counter() - started) * 1000.0, 2)


def run_techniques(retriever: HybridRetriever, question: str, language: str, techniques: Techniques, k: int,
                   variants: Sequence[str] = (), filters: Mapping[str, Any] | None = None,
                   write_pseudo_doc: PseudoDocWriter | None = None, weak_reason: str | None = None,
                   analysis: QueryAnalysis | None = None, graph: GraphSettings | None = None) -> TechniqueRun:
    """Top-k chunks for the question with the switched-on techniques; `weak_reason` opens the expansion gate.
    `analysis` is the question's (made here when not given); `graph` the walk's settings."""
    run = TechniqueRun(hits=[])
    bm25 = retriever.bundle.bm25
    pool = max(retriever.settings.pool, k)
    started = time.perf_counter()
    if techniques.query_class_alpha and retriever.settings.mode == "hybrid":
        run.query_class = (analysis or analyse(question, bm25)).query_class
        alpha = alpha_for(run.query_class, techniques.class_alphas)
        retriever = HybridRetriever(
            retriever.bundle, replace(retriever.settings, fusion="score", alpha=alpha), visible=retriever.visible
        )
        run.applied.append("query_class_alpha")
        run.notes.append(f"query class {run.query_class}: dense weight {alpha:.2f}")
        run.timed("query_class_alpha", started)
    started = time.perf_counter()
    queries = list(dict.fromkeys([question, *variants]))
    base = retriever.search(queries, k=pool, filters=filters)
    run.timed("bm25" if retriever.settings.mode == "bm25" else "dense", started)  # the query embedding dominates hybrid
    added: dict[str, list[Hit]] = {}
    if techniques.multi_query:
        _multi_query(retriever, question, variants, language, techniques, pool, filters, run, added)
    if techniques.prf:
        _rm3(retriever, question, techniques, pool, filters, run, added)
    if techniques.entity_retrieval:
        _entities(retriever, question, language, pool, filters, run, added)
    if techniques.query2doc or techniques.hyde:
        _expansions(retriever, question, language, techniques, base, pool, filters, write_pseudo_doc,
                    weak_reason, run, added)
    hits = _fused(base, added, techniques) if added else base
    if techniques.metadata_boost or techniques.category_boost:
        hits = _boosted(retriever, question, hits, techniques, run)
    if techniques.graph_walk:
        started = time.perf_counter()
        walked = graph_rerank(retriever, question, language, hits, max(k, len(hits)), graph, filters)
        hits = walked.hits
        if walked.walked:
            run.applied.append("graph")
            run.notes.append(walked.note)
            run.timed("graph", started)
        else:
            run.skipped["graph"] = walked.note
    run.hits = hits[:k]
    return run


def _multi_query(retriever: HybridRetriever, question: str, variants: Sequence[str], language: str,
                 techniques: Techniques, pool: int, filters: Mapping[str, Any] | None, run: TechniqueRun,
                 added: dict[str, list[Hit]]) -> None:
    started = time.perf_counter()
    made = rule_variants(question, retriever.bundle.bm25, language, techniques.multi_query_max)
    known = {q.strip().lower() for q in (question, *variants)}
    made = [(text, kind) for text, kind in made if text.strip() and text.strip().lower() not in known]
    if not made:
        run.skipped["multi_query"] = "no rule variant differs from the question and its variants"
        return
    for i, (text, kind) in enumerate(made):
        added[f"variant:{kind}:{i}"] = retriever.search(text, k=pool, filters=filters)
    run.applied.append("multi_query")
    run.notes.append("rule variants: " + "; ".join(f"{kind}: {text}" for text, kind in made))
    run.timed("multi_query", started)


def _rm3(retriever: HybridRetriever, question: str, techniques: Techniques, pool: int,
         filters: Mapping[str, Any] | None, run: TechniqueRun, added: dict[str, list[Hit]]) -> None:
    started = time.perf_counter()
    bundle = retriever.bundle
    allowed = retriever.allowed_rows(filters)  # the caller's access included
    rows, scores = bundle.bm25.search(question, techniques.prf_docs, allowed=allowed)
    if len(rows) < 2:
        run.skipped["prf"] = f"the BM25 first pass found {len(rows)} passage(s); feedback needs 2"
        return
    weights = rm3_expansion(question, rows.tolist(), scores.tolist(), bundle.bm25, terms=techniques.prf_terms,
                            docs=techniques.prf_docs, original_weight=techniques.prf_original_weight)
    if not weights:
        run.skipped["prf"] = "no expansion terms"
        return
    rows, scores = bundle.bm25.search_weighted(weights, pool, allowed=allowed)
    added["rm3"] = _hits_of(retriever, rows, scores, "rm3")
    run.applied.append("prf")
    top = list(weights.items())[: techniques.prf_terms]  # rm3_expansion returns them heaviest first
    run.notes.append("RM3 terms: " + ", ".join(f"{term} {weight:.2f}" for term, weight in top))
    run.timed("prf", started)


def _entities(retriever: HybridRetriever, question: str, language: str, pool: int,
              filters: Mapping[str, Any] | None, run: TechniqueRun, added: dict[str, list[Hit]]) -> None:
    started = time.perf_counter()
    bundle = retriever.bundle
    if not bundle.has_entities:
        run.skipped["entities"] = "the index has no entity field (rebuild or `cragraph index` it again)"
        return
    names = query_entities(question, language)
    if not names:
        run.skipped["entities"] = "the question names no entity"
        return
    allowed = retriever.allowed_rows(filters)  # the caller's access included
    rows, scores = bundle.entities.search(names, pool, allowed=allowed)
    if not len(rows):
        run.skipped["entities"] = f"no passage has the entities {names}"
        return
    added["entities"] = _hits_of(retriever, rows, scores, "entities")
    run.applied.append("entities")
    run.notes.append(f"entities {names}: {len(rows)} passages")
    run.timed("entities", started)


def _expansions(retriever: HybridRetriever, question: str, language: str, techniques: Techniques,
                base: list[Hit], pool: int, filters: Mapping[str, Any] | None,
                write_pseudo_doc: PseudoDocWriter | None, weak_reason: str | None, run: TechniqueRun,
                added: dict[str, list[Hit]]) -> None:
    wanted = [name for name in ("query2doc", "hyde") if getattr(techniques, name)]
    best = max((hit.scores.get("dense", -1.0) for hit in base), default=-1.0)
    reason = weak_reason or (
        f"first pass weak: best dense cosine {best:.3f} < gate {techniques.expansion_gate}"
        if best < techniques.expansion_gate else None
    )
    if reason is None:
        for name in wanted:
            run.skipped[name] = f"gate closed: best dense cosine {best:.3f} >= {techniques.expansion_gate}"
        return
    if write_pseudo_doc is None:
        for name in wanted:
            run.skipped[name] = "no chat model to write the pseudo document"
        return
    for name in wanted:
        started = time.perf_counter()
        try:
            text = (write_pseudo_doc(name, question, language) or "").strip()
        except Exception as error:  # a missing provider package, a network error: the run goes on without it
            run.skipped[name] = f"the chat model failed: {type(error).__name__}: {str(error)[:120]}"
            continue
        if not text:
            run.skipped[name] = "the chat model gave no usable pseudo document"
            continue
        if name == "query2doc":
            added[name] = retriever.search(f"{question} {text}", k=pool, filters=filters)
        else:
            embedder = retriever.bundle.embedder
            vector = embedder.embed_queries([question])[0] + embedder.embed_passages([text])[0]
            added[name] = retriever.dense_search(vector / np.linalg.norm(vector), pool, filters=filters)
        run.applied.append(name)
        run.notes.append(f"{name} ran ({reason}): {text[:120]}")
        run.timed(name, started)


def _hits_of(retriever: HybridRetriever, rows: np.ndarray, scores: np.ndarray, source: str) -> list[Hit]:
    chunks = retriever.bundle.docstore.get(rows.tolist())
    return [Hit(chunk=chunk, score=float(score), scores={source: float(score)}, sources=[source])
            for chunk, score in zip(chunks, scores.tolist(), strict=True)]


def _fused(base: list[Hit], added: dict[str, list[Hit]], techniques: Techniques) -> list[Hit]:
    """Min-max score fusion: the base list (weight 1) plus `added_weight` x each added list; every hit keeps all
    its scores and every list that found it."""
    by_id: dict[str, Hit] = {}
    for name, hits in [("base", base), *added.items()]:
        for rank, hit in enumerate(hits, start=1):
            kept = by_id.setdefault(hit.chunk.id, Hit(chunk=hit.chunk, score=0.0, scores={}, sources=[]))
            if name == "base":
                kept.scores.update(hit.scores)
                kept.sources.extend(hit.sources)
            else:
                kept.scores[f"{name}_rank"] = float(rank)
                kept.sources.append(name)
    keys = sorted(by_id)
    position = {key: i for i, key in enumerate(keys)}
    lists = [{position[hit.chunk.id]: hit.score for hit in hits} for hits in [base, *added.values()]]
    fused = weighted_score_fusion(lists, [1.0] + [techniques.technique_weight] * len(added))
    out = []
    for i in ranked(fused):
        hit = by_id[keys[i]]
        hit.scores["technique_fused"] = float(fused[i])
        hit.score = float(fused[i])
        out.append(hit)
    return out


def _boosted(retriever: HybridRetriever, question: str, hits: list[Hit], techniques: Techniques,
             run: TechniqueRun) -> list[Hit]:
    """Scores of chunks matching a metadata boost spec (or the confidently predicted category) multiplied by
    1 + the weights of the specs they match (stores.metadata)."""
    started = time.perf_counter()
    boosts = dict(techniques.metadata_boost)
    if techniques.category_boost:
        predictor = CategoryPredictor.from_bundle(retriever.bundle, key=techniques.category_key,
                                                  visible=retriever.visible)
        if predictor is None:
            run.skipped["category_boost"] = f"the corpus has no {techniques.category_key!r} metadata"
        else:
            vector = retriever.bundle.embedder.embed_queries([question])[0]
            predicted = predictor.boosts(vector, techniques.category_min_confidence, techniques.metadata_boost_weight)
            if predicted:
                boosts = {**predicted, **boosts}  # a boost the caller gave for the same key wins
                run.notes.append(f"predicted {techniques.category_key}: {predicted[techniques.category_key]}")
            else:
                best = predictor.predict(vector, top=1)
                run.skipped["category_boost"] = (
                    f"no category above confidence {techniques.category_min_confidence} (best: {best})"
                )
    if not boosts:
        return hits
    multipliers = metadata_boosts([hit.chunk for hit in hits], boosts, techniques.metadata_boost_weight)
    for hit, boosted, multiplier in zip(hits, apply_boosts([h.score for h in hits], multipliers), multipliers,
                                        strict=True):
        hit.score = float(boosted)
        if multiplier != 1.0:
            hit.scores["metadata_boost"] = float(multiplier - 1.0)
    run.applied.append("metadata_boost")
    run.notes.append(f"metadata boost {boosts}: {int((multipliers != 1.0).sum())} of {len(hits)} hits")
    run.timed("metadata_boost", started)
    return sorted(hits, key=lambda hit: -hit.score)
