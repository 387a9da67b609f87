"""Plain records shared by ingestion, the index bundle and retrieval.

They are dataclasses of JSON-able fields so graph state that carries them stays serializable.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

_NUMBERING = re.compile(
    r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)]?|[IVXLC]{1,6}[.)]|[А-ЯA-Z][.)])\s+|^\s*(?:第[一二三四五六七八九十\d]+[章节部分]|[一二三四五六七八九十]+、|[（(][一二三四五六七八九十]+[)）])\s*")
"""A heading's own numbering: "4.2 ", "3. ", "IV. ", "Б) ", "第三章 ", "九、", "（二）"."""


def headed(title: str, path: list[str]) -> str:
    """A section's full title: its document's title and the headings above it ("Platform › Components ›
    Kilnhouse"); the title alone outside any section."""
    return " › ".join([p for p in [title, *path] if p])


def titled(title: str, text: str) -> str:
    """A text as BM25, the embedder and the evaluators see it: its title + ". " + the text (the title gives a
    chunk, or a strip of one, its subject)."""
    return f"{title}. {text}" if title else text


@dataclass
class Document:
    """A source document before chunking."""

    id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Chunk:
    """A retrievable unit: a piece of one document with its provenance in `metadata`.

    metadata keys set by ingestion: file (the path read), category (if given), language, position (0-based order
    in the document), start/end (character offsets in the document text), section (the heading the chunk starts
    under, if any), section_path (the headings above it, outermost first, when the chunk lies in one section),
    table_header (the header row of a Markdown table the chunk starts inside), page (PDF pages); a JSONL
    record's own metadata keys as they are.
    """

    id: str
    doc_id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def passage(self) -> str:
        """What BM25 and the embedder see: the title and the section's headings give a chunk its subject."""
        return titled(headed(self.title, self.section_path), self.text)

    @property
    def subject(self) -> str:
        """What the chunk is about: its innermost heading without its number ("4.2 Sounding" -> "Sounding"), so a
        section of a long document is read like a page about that entity; else the document's title."""
        path = self.section_path
        heading = _NUMBERING.sub("", path[-1]).strip() if path else ""
        return heading or self.title

    @property
    def section_path(self) -> list[str]:
        path = self.metadata.get("section_path")
        return [str(p) for p in path] if isinstance(path, list) else []

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Hit:
    """A chunk found by retrieval, with every score it got and where it came from."""

    chunk: Chunk
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"chunk": self.chunk.to_dict(), "score": self.score, "scores": self.scores,
                "sources": self.sources}
