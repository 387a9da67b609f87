"""Chinese read as simplified characters, answered as written.

Why: the reader's weights and the rules know simplified characters; traditional text is folded character by
character (every offset kept), and an answer is cut back from the passage as its user wrote it.
"""

from __future__ import annotations

from dataclasses import replace

from rag.reader.types import Passage, ReaderAnswer
from stores.chinese_script import simplified


def fold(passages: list[Passage]) -> list[Passage]:
    """The passages as the reader reads them: Chinese folded to simplified characters (every offset kept)."""
    return [replace(p, text=simplified(p.text), title=simplified(p.title)) for p in passages]


def as_written(answer: ReaderAnswer, passages: list[Passage], folded: list[Passage]) -> ReaderAnswer:
    """The answer cut from the passage as written (traditional characters stay traditional); yes / no as is."""
    if answer.start < 0 or answer.end <= answer.start:
        return answer
    source, read = passages[answer.passage], folded[answer.passage]
    written = source.title if answer.in_title else source.text
    at = read.text.find(answer.sentence) if answer.sentence else -1
    sentence = source.text[at : at + len(answer.sentence)] if at >= 0 else answer.sentence
    return replace(answer, text=written[answer.start : answer.end], sentence=sentence)
