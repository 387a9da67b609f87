"""The passages as the reader reads them, and its answers as the passages are written.

Why: the reader's weights and the rules know simplified characters and prose. Traditional Chinese is folded
character by character (every offset kept); a table is written row by row as sentences (rag/reader/table_rows.py,
its pieces say where each stretch came from). An answer is cut back from the passage as its user wrote it.
"""

from __future__ import annotations

from dataclasses import replace

from rag.reader.table_rows import rows_as_sentences, to_source
from rag.reader.types import Passage, ReaderAnswer
from stores.chinese_script import simplified
from stores.tokenize import tokenize


def fold(passages: list[Passage], question: str = "") -> list[Passage]:
    """The passages as the reader reads them: Chinese folded to simplified characters, tables as sentences (the
    rows `question` names, when it names some)."""
    asked = frozenset(tokenize(simplified(question)))
    return [_read_form(p, asked) for p in passages]


def _read_form(passage: Passage, asked: frozenset[str]) -> Passage:
    text = simplified(passage.text)
    rows, pieces = rows_as_sentences(text, simplified(passage.table_header), asked)
    return replace(passage, text=rows or text, title=simplified(passage.title), pieces=pieces)


def as_written(answer: ReaderAnswer, passages: list[Passage], folded: list[Passage]) -> ReaderAnswer:
    """The answer cut from the passage as written (traditional characters stay traditional, a cell from its
    table row); yes / no keep their kind and point at the sentence as written."""
    source, read = passages[answer.passage], folded[answer.passage]
    sentence = answer.sentence
    at = read.text.find(sentence) if sentence else -1
    if at >= 0:
        where = _source_range(read, at, at + len(sentence), whole=True)
        sentence = source.text[where[0] : where[1]] if where else sentence
    if answer.start < 0 or answer.end <= answer.start:
        return replace(answer, sentence=sentence)
    if answer.in_title:
        return replace(answer, text=source.title[answer.start : answer.end], sentence=sentence)
    where = _source_range(read, answer.start, answer.end)
    if where is None:
        return replace(answer, sentence=sentence)
    return replace(answer, text=source.text[where[0] : where[1]], sentence=sentence, start=where[0], end=where[1])


def _source_range(read: Passage, start: int, end: int, whole: bool = False) -> tuple[int, int] | None:
    return to_source(read.pieces, start, end, whole) if read.pieces else (start, end)
