"""retrieve: hybrid BM25 + dense search over the query and its variants, fused (settings from Context).

Pseudo-relevance feedback: a BM25-only first pass (well under a millisecond) gives the top passages; their
most common content words missing from the query are appended to its keywords as one more variant.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, fields
from typing import Any

from langgraph.runtime import Runtime

from graph.context import Context
from nodes.common import bundle_of, content_words, keyword_form, passage_of, passage_text, settings_of
from nodes.trace import StageTimer
from stores.retriever import HybridRetriever, QueryError, RetrievalSettings


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


def retrieve(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("retrieve")
    settings = settings_of(runtime)
    bundle = bundle_of(settings)
    retriever = HybridRetriever(bundle, retrieval_settings(settings))
    query = state.get("query") or state["question"]
    queries = list(dict.fromkeys([query, *state.get("variants", [])]))
    note = None
    if settings.prf and settings.prf_terms > 0:
        feedback = feedback_terms(
            retriever, query, state.get("filters"), settings.prf_docs, settings.prf_terms
        )
        if feedback:
            queries.append(f"{keyword_form(query)} {' '.join(feedback)}")
            note = "feedback terms: " + ", ".join(feedback)
    try:
        hits = retriever.search(queries, k=settings.retrieve_k, filters=state.get("filters") or None)
    except QueryError as error:
        hits, note = [], f"query refused: {error}"
    passages = [passage_of(hit) for hit in hits]
    update: dict[str, Any] = {"hits": passages}
    if settings.debug:
        update["debug"] = {f"retrieve_{state.get('retrieval_round', 0)}": _brief(passages)}
    counts = {"queries": len(queries), "hits": len(passages), "index_chunks": len(bundle.docstore)}
    update["trace"] = [
        timer.record(
            f"{len(passages)} hits for {len(queries)} queries",
            counts,
            [p["score"] for p in passages],
            note,
            round=state.get("retrieval_round", 0),
        )
    ]
    return update


def feedback_terms(
    retriever: HybridRetriever, query: str, filters: dict[str, Any] | None, docs: int, terms: int
) -> list[str]:
    """Content words shared by the top BM25 passages and absent from the query, most frequent first."""
    try:
        first = retriever.search(query, k=docs, mode="bm25", filters=filters or None)
    except QueryError:
        return []
    if len(first) < 2:
        return []
    in_query = set(content_words(query))
    document_frequency: Counter[str] = Counter()
    term_frequency: Counter[str] = Counter()
    for hit in first:
        words = [
            w for w in content_words(passage_text(passage_of(hit))) if w not in in_query and not w.isdigit()
        ]
        term_frequency.update(words)
        document_frequency.update(set(words))
    shared = [w for w in document_frequency if document_frequency[w] >= 2]
    shared.sort(key=lambda w: (-document_frequency[w], -term_frequency[w], w))
    return shared[:terms]


def _brief(passages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": p["id"], "title": p["title"], "score": round(p["score"], 4), "text": p["text"][:200]}
        for p in passages
    ]
