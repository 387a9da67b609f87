"""Passages: the JSON-able dicts the graph passes around, built one way for index hits and web results.

A passage is {id, doc_id, title, text, language, source, url, metadata, score, scores, found_by}; state holds
only such dicts, so any checkpointer can store it.
"""

from __future__ import annotations

from typing import Any

from rag.retrieval.web import WebResult
from stores.text import language_of
from stores.types import Hit, headed, titled


def passage_of(hit: Hit) -> dict[str, Any]:
    """A retrieved chunk as a passage."""
    chunk = hit.chunk
    return {
        "id": chunk.id,
        "doc_id": chunk.doc_id,
        "title": chunk.subject,
        "document": chunk.title,
        "text": chunk.text,
        "language": chunk.metadata.get("language"),
        "source": "index",
        "url": None,
        "metadata": chunk.metadata,
        "score": float(hit.score),
        "scores": dict(hit.scores),
        "found_by": list(hit.sources),
    }


def web_passage(result: WebResult) -> dict[str, Any]:
    """A web search result as a passage; its URL is its id."""
    return {
        "id": result.url,
        "doc_id": None,
        "title": result.title,
        "text": result.content,
        "language": language_of(result.content),
        "source": "web",
        "url": result.url,
        "metadata": {},
        "score": result.score,
        "scores": {"web": result.score},
        "found_by": ["web"],
    }


def passage_text(passage: dict[str, Any]) -> str:
    """What the embedder and evaluators see: heading + ". " + text, as at index time."""
    return titled(heading(passage), passage.get("text") or "")


def heading(passage: dict[str, Any]) -> str:
    """The passage's title as the index read it: a section's chunk under its document's title and the headings above
    it ("Platform › Components › Kilnhouse"), so the grade knows what document the section speaks of; else its
    title."""
    path = (passage.get("metadata") or {}).get("section_path")
    if passage.get("document") and isinstance(path, list) and path:
        return headed(str(passage["document"]), [str(p) for p in path])
    return str(passage.get("title") or "")


def in_section(passage: dict[str, Any]) -> bool:
    """The passage's subject is a heading inside its document, not the document's own title (passage_of writes
    a section's heading as the title and the document's title as "document")."""
    title, document = (" ".join(str(passage.get(key) or "").split()).lower() for key in ("title", "document"))
    return bool(title and document and title != document)
