"""retrieve: hybrid BM25 + dense search over the query and its variants, plus the switched-on techniques.

The techniques (entities, rule variants, RM3, query-class alpha, gated Query2Doc / HyDE, metadata boosts) run
in rag.retrieval.techniques; which of them may run is capped by the strategy (rag.retrieval.strategy:
a latency budget or strategy=auto). The trace says what ran, what was skipped and why; the output carries the strategy.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langgraph.runtime import Runtime

from models.chat import load_chat_model, message_text
from models.structured import warn_unusable
from nodes._runtime import bundle_of, settings_of, visible_of
from prompts.expansion import expansion_messages
from rag.config import operator
from rag.context import Context
from rag.knowledge.passages import passage_of
from rag.retrieval.analysis import analysis_of
from rag.retrieval.full_document import whole_documents
from rag.retrieval.retriever import HybridRetriever, QueryError
from rag.retrieval.strategy import LATENCY_STATS, STRATEGY_FULL_DOCUMENT, apply_strategy, choose_strategy
from rag.retrieval.techniques import PseudoDocWriter, run_techniques
from rag.state import StageTimer, State


def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("retrieve")
    settings, config = settings_of(runtime), operator()
    bundle = bundle_of(settings)
    query = state.get("query") or state["question"]
    language = state.get("language") or "en"
    analysis = analysis_of(state.get("analysis"), query, bundle.bm25)
    strategy = state.get("strategy") or choose_strategy(analysis, settings.strategy, settings.latency_budget_ms)
    mode = {"mode": strategy["mode"]} if strategy.get("mode") else {}
    visible = visible_of(runtime, bundle)  # the caller's documents only: every search below stays within them
    retriever = HybridRetriever(bundle, replace(config.retrieval, **mode), visible=visible)
    techniques = apply_strategy(config.techniques, strategy)
    round_ = state.get("retrieval_round", 0)
    weak = f"graded {state.get('verdict')} in round {round_ - 1}" if round_ > 0 else None
    note = None
    try:
        run = run_techniques(retriever, query, language, techniques, config.rerank.retrieve_k,
                             variants=state.get("variants", []), filters=state.get("filters") or None,
                             write_pseudo_doc=pseudo_doc_writer(settings), weak_reason=weak, analysis=analysis,
                             graph=config.graph)
        hits = run.hits
        if strategy["name"] == STRATEGY_FULL_DOCUMENT:
            hits = whole_documents(retriever, hits, state.get("filters") or None)
            run.notes.append(f"full-document read: {len({h.chunk.doc_id for h in hits})} documents, "
                             f"{len(hits)} chunks")
    except QueryError as error:
        run, hits, note = None, [], f"query refused: {error}"
    if run is not None:
        crossing = retriever.crosslingual(query) if retriever.settings.mode == "hybrid" else None
        notes = [*([crossing.note] if crossing else []), *run.notes]
        note = "; ".join([*notes, *(f"{k} skipped: {why}" for k, why in run.skipped.items())]) or None
        for name, ms in run.timings_ms.items():
            LATENCY_STATS.record(name, ms)
    passages = [passage_of(hit) for hit in hits]
    update: dict[str, Any] = {"hits": passages, "strategy": strategy}
    if settings.debug:
        update["debug"] = {f"retrieve_{round_}": _brief(passages)}
    chunks = len(bundle.docstore) if visible is None else len(visible)  # what this caller may see
    counts = {"variants": len(state.get("variants", [])), "hits": len(passages), "index_chunks": chunks}
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
        spec = settings.model_for(operator().models.expansion)
        try:
            model = load_chat_model(spec)
            return message_text(model.invoke(expansion_messages(kind, question, language))).strip() or None
        except Exception as error:  # said once on stderr with the fix; the technique records it as skipped
            warn_unusable(spec, error)
            raise

    return write


def _brief(passages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": p["id"], "title": p["title"], "score": round(p["score"], 4), "text": p["text"][:200]}
        for p in passages
    ]
