"""Semantic chunking: cut long documents where the topic moves, keep short ones whole.

Sentences are embedded and neighbours merged while they stay on one subject (cosine to the chunk's mean vector
or to its last sentence at or above a threshold) and the chunk fits the size budget; chunks left too short are
then folded into their more similar neighbour. Chunks are contiguous character ranges of the document, so
offsets are exact and no text is ever lost: only whitespace between chunks falls outside them.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from stores.markdown_tables import header_above
from stores.text import detect_language, normalize_language, sentence_spans, trim_span
from stores.types import Chunk, Document

Embed = Callable[[list[str]], np.ndarray]
"""Maps sentences to L2-normalized passage vectors, one row per sentence."""

_NO_SPACE_LANGUAGES = frozenset(["zh", "ja", "ko", "th", "my", "lo", "km"])
_CJK_SOFT_BREAKS = "，、,：:；;）)」』"


@dataclass(frozen=True)
class ChunkSettings:
    """Size and similarity knobs; see `chunk_document` for what each one does."""

    min_chars: int = 120
    max_chars: int = 500
    merge_threshold: float = 0.58
    whole_doc_chars: int = 1200
    language: str | None = None

    def __post_init__(self) -> None:
        if self.max_chars < 1:
            raise ValueError(f"max_chars must be positive, got {self.max_chars}")
        if not 0 <= self.min_chars <= self.max_chars:
            raise ValueError(f"min_chars must lie in [0, max_chars], got {self.min_chars}")
        if self.whole_doc_chars < 0:
            raise ValueError(f"whole_doc_chars must not be negative, got {self.whole_doc_chars}")


@dataclass
class _Plan:
    """A document cut into embeddable units (sentences, or pieces of over-long sentences); `parts[i]`: the
    section unit i lies in (0 before the first heading), so that no chunk runs from one section into the next."""

    doc: Document
    language: str
    units: list[tuple[int, int]]
    needs_embedding: bool
    parts: list[int] = field(default_factory=list)


@dataclass
class _Group:
    first: int
    last: int
    vector_sum: np.ndarray


def chunk_document(doc: Document, embed: Embed, *, min_chars: int = 120, max_chars: int = 500,
                   merge_threshold: float = 0.58, whole_doc_chars: int = 1200,
                   language: str | None = None) -> list[Chunk]:
    """Split one document into chunks.

    A document of at most `whole_doc_chars` characters (ignoring surrounding whitespace) is one chunk and
    `embed` is not called. Longer ones are split into sentences (a sentence over `max_chars` into pieces at
    word boundaries, or character windows for Chinese), neighbours merged while similar (>= `merge_threshold`)
    and within `max_chars`, then chunks under `min_chars` merged into the more similar neighbour when the
    result stays within `max_chars + min_chars`. `language` overrides detection. Returns [] for a blank document.
    """
    settings = ChunkSettings(min_chars, max_chars, merge_threshold, whole_doc_chars, language)
    plan = _plan(doc, settings)
    vectors = _embed_checked(embed, _unit_texts(plan)) if plan.needs_embedding else None
    return _assemble(plan, vectors, settings)


def chunk_documents(docs: Iterable[Document], embed: Embed, progress: bool = True, *, embed_batch: int = 256,
                    **settings: object) -> list[Chunk]:
    """Chunk many documents, embedding the sentences of several documents per `embed` call.

    `settings` are `chunk_document`'s keywords. Documents are gathered until at least `embed_batch` sentences
    are waiting, so short documents do not each pay for a separate embedder call. Shows a tqdm bar on stderr when
    `progress` is true, counted in characters and moved every `embed_batch` sentences, so one long document shows
    its rate and ETA too (a bar of documents would sit at 0/1 for the hours a 20 MB file takes). Chunks come back
    in document order.
    """
    from tqdm.auto import tqdm

    chunk_settings = ChunkSettings(**settings)  # type: ignore[arg-type]
    docs = list(docs)
    results: list[list[Chunk]] = [[] for _ in docs]
    pending: list[tuple[int, _Plan]] = []
    finished = 0

    with tqdm(total=sum(len(doc.text) for doc in docs), unit="char", unit_scale=True, desc="chunking",
              disable=not progress) as bar:

        def done(count: int, characters: int) -> None:
            nonlocal finished
            finished += count
            bar.update(characters)
            bar.set_postfix_str(f"{finished}/{len(docs)} documents", refresh=False)

        def flush() -> None:
            if not pending:
                return
            texts = [text for _, plan in pending for text in _unit_texts(plan)]
            parts, shown = [], 0
            for start in range(0, len(texts), embed_batch):
                batch = texts[start:start + embed_batch]
                parts.append(_embed_checked(embed, batch))
                step = sum(map(len, batch))
                bar.update(step)
                shown += step
            vectors = np.concatenate(parts)
            offset = 0
            for index, plan in pending:
                count = len(plan.units)
                results[index] = _assemble(plan, vectors[offset:offset + count], chunk_settings)
                offset += count
            done(len(pending), sum(len(plan.doc.text) for _, plan in pending) - shown)  # the text between units
            pending.clear()

        waiting = 0
        for index, doc in enumerate(docs):
            plan = _plan(doc, chunk_settings)
            if not plan.needs_embedding:
                results[index] = _assemble(plan, None, chunk_settings)
                done(1, len(doc.text))
                continue
            pending.append((index, plan))
            waiting += len(plan.units)
            if waiting >= embed_batch:
                flush()
                waiting = 0
        flush()
    return [chunk for chunks in results for chunk in chunks]


# ----------------------------------------------------------------------------------------------- planning


def _plan(doc: Document, settings: ChunkSettings) -> _Plan:
    text = doc.text
    language = normalize_language(settings.language) if settings.language else detect_language(text)
    whole = trim_span(text, 0, len(text))
    if whole is None:
        return _Plan(doc, language, [], needs_embedding=False)
    if whole[1] - whole[0] <= settings.whole_doc_chars:
        return _Plan(doc, language, [whole], needs_embedding=False)
    units: list[tuple[int, int]] = []
    no_spaces = language in _NO_SPACE_LANGUAGES
    starts = section_starts(doc)
    for sentence in sentence_spans(text, language):
        for start, end in _cut_at(text, sentence, starts):
            if end - start <= settings.max_chars:
                units.append((start, end))
            else:
                units.extend(_split_long(text, start, end, settings.max_chars, no_spaces))
    parts = [bisect.bisect_right(starts, start) for start, _ in units]
    return _Plan(doc, language, units, needs_embedding=len(units) > 1, parts=parts)


def section_starts(doc: Document) -> list[int]:
    """Where the text under each of the loader's headings begins, ascending."""
    sections = doc.metadata.get("sections")
    if not isinstance(sections, list):
        return []
    return sorted({int(s["start"]) for s in sections if isinstance(s, dict) and isinstance(s.get("start"), int)})


def _cut_at(text: str, span: tuple[int, int], starts: list[int]) -> list[tuple[int, int]]:
    """The span cut where a section begins inside it (a heading left the body, so a list item without a full
    stop and the next section's first sentence can read as one sentence)."""
    start, end = span
    pieces = []
    for cut in starts[bisect.bisect_right(starts, start):]:
        if cut >= end:
            break
        piece = trim_span(text, start, cut)
        if piece:
            pieces.append(piece)
        start = cut
    tail = trim_span(text, start, end)
    return [*pieces, tail] if tail else pieces


def _split_long(text: str, start: int, end: int, max_chars: int, no_spaces: bool) -> list[tuple[int, int]]:
    """Pieces of at most `max_chars` characters: cut at the last space (or, for Chinese, after the last comma-
    like mark, else anywhere) inside each window."""
    pieces = []
    position = start
    while end - position > max_chars:
        limit = position + max_chars
        cut = -1
        if not no_spaces:
            cut = max(text.rfind(" ", position + 1, limit + 1), text.rfind("\n", position + 1, limit + 1))
        if cut <= position + max_chars // 4:
            soft = max(text.rfind(mark, position + 1, limit) for mark in _CJK_SOFT_BREAKS)
            cut = soft + 1 if soft > position + max_chars // 2 else limit
        piece = trim_span(text, position, cut)
        if piece:
            pieces.append(piece)
        position = cut
        while position < end and text[position].isspace():
            position += 1
    tail = trim_span(text, position, end)
    if tail:
        pieces.append(tail)
    return pieces


def _unit_texts(plan: _Plan) -> list[str]:
    return [plan.doc.text[start:end] for start, end in plan.units]


def _embed_checked(embed: Embed, texts: list[str]) -> np.ndarray:
    vectors = np.asarray(embed(texts), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ValueError(f"embed returned shape {vectors.shape} for {len(texts)} sentences")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


# ----------------------------------------------------------------------------------------------- merging


def _assemble(plan: _Plan, vectors: np.ndarray | None, settings: ChunkSettings) -> list[Chunk]:
    if not plan.units:
        return []
    if vectors is None:
        groups = [_Group(0, len(plan.units) - 1, np.zeros(1, dtype=np.float32))]
    else:
        parts = plan.parts or [0] * len(plan.units)
        groups = _merge_similar(plan.units, vectors, settings, parts)
        groups = _absorb_short(plan.units, groups, settings, parts)
    return [_chunk(plan, position, group) for position, group in enumerate(groups)]


def _merge_similar(units: list[tuple[int, int]], vectors: np.ndarray, settings: ChunkSettings,
                   parts: list[int]) -> list[_Group]:
    groups: list[_Group] = []
    for index, (_, end) in enumerate(units):
        vector = vectors[index]
        if groups:
            group = groups[-1]
            fits = end - units[group.first][0] <= settings.max_chars and parts[group.first] == parts[index]
            if fits and _similarity(group, vectors, vector) >= settings.merge_threshold:
                group.last = index
                group.vector_sum = group.vector_sum + vector
                continue
        groups.append(_Group(index, index, vector.copy()))
    return groups


def _similarity(group: _Group, vectors: np.ndarray, vector: np.ndarray) -> float:
    """The better of cosine to the chunk's mean and to its last sentence: a chunk may drift slowly."""
    to_last = float(vectors[group.last] @ vector)
    norm = float(np.linalg.norm(group.vector_sum))
    to_mean = float(group.vector_sum @ vector) / norm if norm > 0 else to_last
    return max(to_mean, to_last)


def _absorb_short(units: list[tuple[int, int]], groups: list[_Group], settings: ChunkSettings,
                  parts: list[int]) -> list[_Group]:
    """Fold chunks under min_chars into the more similar neighbour of the same section, shortest first, while the
    result fits.

    Groups form a linked list and a heap orders the short ones, so thousands of tiny sentences cost
    O(n log n). A short group that cannot merge now never can: its neighbours only grow.
    """
    limit = settings.max_chars + settings.min_chars
    count = len(groups)
    previous = list(range(-1, count - 1))
    following = [*range(1, count), -1]
    alive = [True] * count

    def length(index: int) -> int:
        return units[groups[index].last][1] - units[groups[index].first][0]

    def cosine(a: _Group, b: _Group) -> float:
        norms = float(np.linalg.norm(a.vector_sum) * np.linalg.norm(b.vector_sum))
        return float(a.vector_sum @ b.vector_sum) / norms if norms > 0 else 0.0

    heap = [(length(index), index) for index in range(count) if length(index) < settings.min_chars]
    heapq.heapify(heap)
    while heap:
        size, index = heapq.heappop(heap)
        if not alive[index] or size != length(index):
            continue
        options = []
        for neighbour in (previous[index], following[index]):
            if neighbour < 0 or parts[groups[neighbour].first] != parts[groups[index].first]:
                continue
            left, right = min(index, neighbour), max(index, neighbour)
            if units[groups[right].last][1] - units[groups[left].first][0] <= limit:
                options.append((cosine(groups[index], groups[neighbour]), -neighbour, left, right))
        if not options:
            continue
        _, _, left, right = max(options)
        groups[left] = _Group(groups[left].first, groups[right].last,
                              groups[left].vector_sum + groups[right].vector_sum)
        alive[right] = False
        following[left] = following[right]
        if following[right] >= 0:
            previous[following[right]] = left
        if length(left) < settings.min_chars:
            heapq.heappush(heap, (length(left), left))
    return [group for index, group in enumerate(groups) if alive[index]]


def _chunk(plan: _Plan, position: int, group: _Group) -> Chunk:
    doc = plan.doc
    start, end = plan.units[group.first][0], plan.units[group.last][1]
    metadata = {**doc.metadata, "language": plan.language, "position": position, "start": start, "end": end}
    sections = metadata.pop("sections", None)  # the loader's headings: a chunk keeps the one it starts under
    if isinstance(sections, list):
        sections = [s for s in sections if isinstance(s, dict) and isinstance(s.get("start"), int)]
        under = [s for s in sections if s["start"] <= start]
        if under:
            metadata["section"] = under[-1]["heading"]
            if not any(start < s["start"] < end for s in sections):  # the chunk lies in one section
                metadata["section_path"] = heading_path(under)
    header = header_above(doc.text, start)  # the chunk starts inside a table: its rows need their column names
    if header:
        metadata["table_header"] = header
    return Chunk(id=f"{doc.id}#{position}", doc_id=doc.id, text=doc.text[start:end], title=doc.title,
                 metadata=metadata)


def heading_path(under: list[dict[str, object]]) -> list[str]:
    """The headings above the last of `under` (in document order) by their levels: ["Components", "Kilnhouse"]."""
    path: list[tuple[int, str]] = []
    for section in under:
        level = section.get("level")
        depth = level if isinstance(level, int) else 1
        path = [(d, h) for d, h in path if d < depth] + [(depth, str(section["heading"]))]
    return [heading for _, heading in path]
