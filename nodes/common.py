"""What every node needs: its settings, the cached index / evaluator / chat model, and passage dicts.

Heavy objects come from the per-process caches (load_bundle, load_embedder, load_evaluator, load_chat_model),
never from state, so state stays JSON-able and a server loads each model once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from evaluators.base import RelevanceEvaluator
from evaluators.registry import load_evaluator
from graph.context import Context
from models.embedder import Embedder, canonical_name
from stores.bundle import IndexBundle, load_bundle
from stores.text import detect_language
from stores.types import Hit


def settings_of(runtime: Runtime[Context] | None) -> Context:
    """The run's Context; a run started without one (Studio, a bare invoke) gets the defaults + env."""
    context = getattr(runtime, "context", None) if runtime is not None else None
    if context is None:
        return Context()
    if isinstance(context, dict):
        return Context(**context)
    return context


def bundle_of(settings: Context) -> IndexBundle:
    """The index bundle, opened once per process; refuses an embedder other than the index's own."""
    bundle = load_bundle(settings.index)
    built_with = bundle.settings.embedder
    if settings.embedder and canonical_name(settings.embedder) != canonical_name(built_with):
        raise ValueError(
            f"the index at {settings.index} was built with embedder {built_with!r}, "
            f"not {settings.embedder!r}; use its embedder or rebuild the index"
        )
    return bundle


def evaluator_spec(settings: Context, bundle: IndexBundle) -> str:
    """'cosine' means the calibrated cosine on the index's own embedder."""
    spec = settings.evaluator.strip()
    return f"cosine:{bundle.settings.embedder}" if spec.lower() == "cosine" else spec


def evaluator_of(settings: Context, bundle: IndexBundle) -> RelevanceEvaluator:
    return load_evaluator(evaluator_spec(settings, bundle))


_QUERY_VECTORS: OrderedDict[tuple[int, str], np.ndarray] = OrderedDict()
_QUERY_VECTORS_LOCK = threading.Lock()
_QUERY_VECTORS_MAX = 256


def forget_vectors() -> None:
    """Empty the per-process query and passage vector caches, so a benchmark times each mode from the same
    start instead of letting one mode reuse the sentences another just embedded."""
    from evaluators.cosine import forget_passage_vectors

    with _QUERY_VECTORS_LOCK:
        _QUERY_VECTORS.clear()
    forget_passage_vectors()


def query_vector(embedder: Embedder, text: str) -> np.ndarray:
    """The query embedding of `text`, computed once per process (several nodes need the question's)."""
    key = (id(embedder), text)
    with _QUERY_VECTORS_LOCK:
        if key in _QUERY_VECTORS:
            _QUERY_VECTORS.move_to_end(key)
            return _QUERY_VECTORS[key]
    vector = embedder.embed_queries([text])[0]
    with _QUERY_VECTORS_LOCK:
        _QUERY_VECTORS[key] = vector
        while len(_QUERY_VECTORS) > _QUERY_VECTORS_MAX:
            _QUERY_VECTORS.popitem(last=False)
    return vector


def passage_of(hit: Hit) -> dict[str, Any]:
    """A retrieved chunk as a JSON-able passage dict."""
    chunk = hit.chunk
    return {
        "id": chunk.id,
        "doc_id": chunk.doc_id,
        "title": chunk.title,
        "text": chunk.text,
        "language": chunk.metadata.get("language"),
        "source": "index",
        "url": None,
        "metadata": chunk.metadata,
        "score": float(hit.score),
        "scores": dict(hit.scores),
        "found_by": list(hit.sources),
    }


def passage_text(passage: dict[str, Any]) -> str:
    """What the embedder and evaluators see: title + ". " + text, as at index time."""
    return titled(passage.get("title") or "", passage.get("text") or "")


def titled(title: str, text: str) -> str:
    """A text (a passage, a strip of one) as scored: its passage's title + ". " + the text, as at index time."""
    return f"{title}. {text}" if title else text


def chunk_rows(bundle: IndexBundle, chunk_ids: Sequence[str]) -> list[int]:
    """Docstore row ids (the dense index's ids) of the given chunk ids, in order."""
    if not chunk_ids:
        return []
    rows = bundle.docstore.filter_rows({"id": list(chunk_ids)}).tolist()
    row_of = {chunk.id: row for row, chunk in zip(rows, bundle.docstore.get(rows), strict=True)}
    return [row_of[cid] for cid in chunk_ids]


def stored_cosines(bundle: IndexBundle, question: str, passages: Sequence[dict[str, Any]]) -> np.ndarray:
    """cos(question, passage) from the vectors stored at index time: no re-embedding."""
    vectors = bundle.dense.vectors_for(chunk_rows(bundle, [p["id"] for p in passages]))
    return vectors @ query_vector(bundle.embedder, question)


def language_of(text: str) -> str:
    language = detect_language(text)
    return language if language != "und" else "en"


