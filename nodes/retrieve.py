"""retrieve: hybrid BM25 + dense search over the query and its variants, plus the switched-on techniques.

The techniques (entities, rule variants, RM3, query-class alpha, gated Query2Doc / HyDE, metadata boosts) run
in stores/techniques.py; which of them may run is capped by the strategy (nodes/strategy.py: a latency budget
or strategy=auto). The trace says what ran, what was skipped and why; the output carries the strategy.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from langgraph.runtime import Runtime

from graph.context import Context
from models.chat import load_chat_model, message_text
from nodes.common import bundle_of, passage_of, settings_of
from nodes.strategy import PROCESS_LATENCY, apply_strategy, choose_strategy
from nodes.trace import StageTimer
from prompts.expansion import expansion_messages
from stores.retriever import HybridRetriever, QueryError, RetrievalSettings
from stores.techniques import PseudoDocWriter, Techniques, run_techniques


def retrieval_settings(settings: Context) -> RetrievalSettings:
    """RetrievalSettings from Context's `retrieval_<name>` fields plus `retrieval_extra`; others default."""
    known = {f.name for f in fields(RetrievalSettings)}
    values = {
        name: getattr(settings, f"retrieval_{name}")
        for name in known
        if hasattr(settings, f"retrieval_{name}")
    }
    unknown = set(settings.retrieval_extra) - known
    if unknown:
        raise ValueError(
            f"retrieval_extra names unknown RetrievalSettings fields: {', '.join(sorted(unknown))}"
        )
    return RetrievalSettings(**{**values, **settings.retrieval_extra})


def retrieval_context_fields(settings: RetrievalSettings) -> dict[str, Any]:
    """The inverse of `retrieval_settings`: Context keyword arguments that reproduce `settings` exactly."""
    context_fields = {f.name for f in fields(Context)}
    values = asdict(settings)
    own = {f"retrieval_{k}": v for k, v in values.items() if f"retrieval_{k}" in context_fields}
    extra = {k: v for k, v in values.items() if f"retrieval_{k}" not in context_fields}
    return {**own, "retrieval_extra": extra}


def techniques_of(settings: Context) -> Techniques:
    """The Techniques switched on in Context (before a latency budget or strategy=auto adjusts them)."""
    return Techniques(
        mode=settings.retrieval_mode,
        entities=settings.entity_retrieval,
        multi_query=settings.multi_query,
        multi_query_max=settings.multi_query_max,
        prf=settings.prf,
        prf_docs=settings.prf_docs,
        prf_terms=settings.prf_terms,
        prf_original_weight=settings.prf_original_weight,
        query_class_alpha=settings.query_class_alpha,
        class_alphas=dict(settings.class_alphas),
        query2doc=settings.query2doc,
        hyde=settings.hyde,
        expansion_gate=settings.expansion_gate,
        metadata_boost=dict(settings.metadata_boost),
        boost_weight=settings.metadata_boost_weight,
        category_boost=settings.category_boost,
        category_key=settings.category_key,
        category_min_confidence=settings.category_min_confidence,
        added_weight=settings.technique_weight,
    )


def retrieve(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("retrieve")
    settings = settings_of(runtime)
    bundle = bundle_of(settings)
    retriever = HybridRetriever(bundle, retrieval_settings(settings))
    query = state.get("query") or state["question"]
    language = state.get("language") or "en"
    strategy = state.get("strategy") or choose_strategy(query, settings, bundle)
    techniques = apply_strategy(techniques_of(settings), strategy)
    round_ = state.get("retrieval_round", 0)
    weak = f"graded {state.get('verdict')} in round {round_ - 1}" if round_ > 0 else None
    note = None
    try:
        run = run_techniques(retriever, query, language, techniques, settings.retrieve_k,
                             variants=state.get("variants", []), filters=state.get("filters") or None,
                             write_pseudo_doc=pseudo_doc_writer(settings), weak_reason=weak)
        hits = run.hits
    except QueryError as error:
        run, hits, note = None, [], f"query refused: {error}"
    if run is not None:
        note = "; ".join([*run.notes, *(f"{k} skipped: {why}" for k, why in run.skipped.items())]) or None
        for name, ms in run.timings_ms.items():
            PROCESS_LATENCY.record(name, ms)
    passages = [passage_of(hit) for hit in hits]
    update: dict[str, Any] = {"hits": passages, "strategy": strategy}
    if settings.debug:
        update["debug"] = {f"retrieve_{round_}": _brief(passages)}
    counts = {"variants": len(state.get("variants", [])), "hits": len(passages), "index_chunks": len(bundle.docstore)}
    record = timer.record(
        f"{len(passages)} hits; strategy {strategy['name']}" + (f" ({strategy['tier']})" * bool(strategy.get("tier"))),
        counts,
        [p["score"] for p in passages],
        note,
        round=round_,
        techniques=run.applied if run else [],
        skipped=run.skipped if run else {},
    )
    update["trace"] = [record]
    return update


def pseudo_doc_writer(settings: Context) -> PseudoDocWriter:
    """Query2Doc / HyDE text from the chat model; a failure is recorded as the technique's skip reason."""
    def write(kind: str, question: str, language: str) -> str | None:
        model = load_chat_model(settings.model_for(settings.expansion_model))
        return message_text(model.invoke(expansion_messages(kind, question, language))).strip() or None

    return write


def _brief(passages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": p["id"], "title": p["title"], "score": round(p["score"], 4), "text": p["text"][:200]}
        for p in passages
    ]
