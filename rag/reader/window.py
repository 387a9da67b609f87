"""Which sentences of the passages the reader reads, under a token budget.

Why: reading five whole passages with the encoder costs 300+ ms on one CPU thread; the answer nearly always
sits in one of the few sentences that share the question's rarer words. Sentences are scored by the IDF (over
the given passages' sentences) of the question terms they contain, with the passage's title counted as part of
each of its sentences (a passage about the question's subject), plus a small bonus for the passage's retrieval
rank. The best ones are kept up to the budget and read in document order, grouped by passage under their title.

A multi-hop question names its first hop, not its answer's page: "the German musician whose godfather is whom?"
shares no rare word with "Carl Philipp Emanuel Bach: ... his godfather Georg Philipp Telemann". With `hop_weight`
on, a passage whose title (an entity the question does not name) is mentioned by a sentence of another passage
inherits that share of the mentioning sentence's score, so the bridge entity's own page is read too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from rag.reader.types import Passage
from stores.text import sentence_spans
from stores.tokenize import tokenize

RANK_BONUS = 0.15  # idf units per rank step: ties go to the better-ranked passage
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")  # "Scott Howell (political consultant)" is mentioned as "Scott Howell"


@dataclass(frozen=True)
class Sentence:
    passage: int
    start: int
    end: int
    text: str
    score: float


@dataclass(frozen=True)
class Segment:
    """A piece of the reader's context string and where it came from (title = -1 start)."""

    passage: int
    context_start: int  # offset in the context string
    source_start: int  # offset in the passage text, or in the title when in_title
    length: int
    in_title: bool


@dataclass(frozen=True)
class ReadContext:
    text: str
    segments: list[Segment]
    sentences: list[Sentence]

    def locate(self, start: int, end: int) -> tuple[Segment, int, int] | None:
        """Map a [start, end) range of the context string back to (segment, start, end) in its source."""
        for seg in self.segments:
            if seg.context_start <= start and end <= seg.context_start + seg.length:
                offset = seg.source_start - seg.context_start
                return seg, start + offset, end + offset
        return None


def score_sentences(question: str, passages: list[Passage], language: str, hop_weight: float = 0.0
                    ) -> list[Sentence]:
    """Every sentence of every passage with its selection score."""
    q_terms = set(tokenize(question))
    rows: list[tuple[int, int, int, str, set[str]]] = []
    for p, passage in enumerate(passages):
        title_terms = set(tokenize(passage.title)) if passage.title else set()
        for start, end in sentence_spans(passage.text, language):
            text = passage.text[start:end]
            rows.append((p, start, end, text, (set(tokenize(text)) | title_terms) & q_terms))
    df: dict[str, int] = {}
    for row in rows:
        for term in row[4]:
            df[term] = df.get(term, 0) + 1
    n = max(len(rows), 1)
    out: list[Sentence] = []
    for p, start, end, text, terms in rows:
        # sorted: a float sum in set order would vary with PYTHONHASHSEED and break ties differently
        score = sum(math.log(1.0 + n / df[t]) for t in sorted(terms)) - RANK_BONUS * p
        out.append(Sentence(p, start, end, text, score))
    return hop_scores(out, passages, q_terms, hop_weight) if hop_weight > 0 else out


def hop_scores(sentences: list[Sentence], passages: list[Passage], q_terms: set[str], weight: float
               ) -> list[Sentence]:
    """Each sentence of a passage about an entity the question does not name, but another passage's sentence
    does, gains `weight` x the best such mentioning sentence's score."""
    inherited = [0.0] * len(passages)
    for p, passage in enumerate(passages):
        name = _QUALIFIER.sub("", passage.title).strip().lower()
        if not name or set(tokenize(name)) <= q_terms:  # no title, or the question names it: not a hop
            continue
        # another page's sentence: a chunk of the same document naming its own title is no hop
        mentions = (s.score for s in sentences
                    if passages[s.passage].title != passage.title and s.score > 0 and _mentions(s.text, name))
        inherited[p] = weight * max(mentions, default=0.0)
    return [replace(s, score=s.score + inherited[s.passage]) if inherited[s.passage] else s for s in sentences]


def _mentions(text: str, name: str) -> bool:
    """A whole-word, case-blind occurrence (any occurrence where the name is Chinese, which has no word breaks);
    every occurrence is tried, so "Rush" inside "Brush" does not hide a later "Rush"."""
    lowered = text.lower()
    at = lowered.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not text[at - 1].isalnum() or not name[0].isascii()) and \
                (end == len(text) or not text[end].isalnum() or not name[-1].isascii()):
            return True
        at = lowered.find(name, at + 1)
    return False


def build_context(
    question: str, passages: list[Passage], language: str, token_budget: int, count_tokens, hop_weight: float = 0.0
) -> ReadContext:
    """The context string: chosen sentences in document order, each passage opened by its title."""
    sentences = score_sentences(question, passages, language, hop_weight)
    order = sorted(range(len(sentences)), key=lambda i: -sentences[i].score)
    chosen: set[int] = set()
    used = 0
    titled: set[int] = set()
    for i in order:
        s = sentences[i]
        cost = count_tokens(s.text) + (0 if s.passage in titled else count_tokens(passages[s.passage].title) + 1)
        if used + cost > token_budget:
            if used == 0:  # one over-long sentence: take it anyway, the tokenizer truncates it
                chosen.add(i)
                titled.add(s.passage)
            continue
        chosen.add(i)
        titled.add(s.passage)
        used += cost
    picked = sorted(chosen, key=lambda i: (sentences[i].passage, sentences[i].start))
    parts: list[str] = []
    segments: list[Segment] = []
    cursor = 0
    current = -1
    for i in picked:
        s = sentences[i]
        if s.passage != current:
            if parts:
                parts.append(" | ")
                cursor += 3
            title = passages[s.passage].title
            if title:
                segments.append(Segment(s.passage, cursor, 0, len(title), True))
                parts.append(title + ": ")
                cursor += len(title) + 2
            current = s.passage
        else:
            parts.append(" ")
            cursor += 1
        segments.append(Segment(s.passage, cursor, s.start, s.end - s.start, False))
        parts.append(s.text)
        cursor += len(s.text)
    return ReadContext("".join(parts), segments, [sentences[i] for i in picked])
