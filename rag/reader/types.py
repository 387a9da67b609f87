"""Plain data types of the reader's input and output, and its one error."""

from __future__ import annotations

from dataclasses import dataclass

from rag.reader.table_rows import Piece


@dataclass(frozen=True)
class Passage:
    """One retrieved passage: its text, optional title and retrieval score (higher is better). `table_header`:
    the header row of a table the text starts inside (the chunk's metadata). `pieces`: set on a passage rewritten
    for reading (rag/reader/table_rows.py), where each piece of its text came from in the original."""

    text: str
    title: str = ""
    score: float = 0.0
    table_header: str = ""
    pieces: tuple[Piece, ...] = ()


@dataclass(frozen=True)
class ReaderAnswer:
    """A short answer and where it came from.

    kind: "span" (text is a substring of a passage or, when in_title, of its title), "yes" or "no".
    start / end: character offsets of the span in passages[passage].text (in the title when in_title);
    -1 for yes / no answers, which point at the sentence that decided them.
    score: what the answer was chosen by (the re-ranker's score, else span score + sentence prior); comparable
    only within one question. span_score: start + end logits; sentence_score: the lexical match of the span's
    sentence to the question, relative to the best sentence read (0..1). confidence: the chosen span's
    softmax share among the question's candidates (0..1); None for answers decided by a rule (yes / no, a
    compared attribute), which have no candidates to be measured against. margin: the span's start + end logits
    over the no-answer position's (the first token, where the reader was trained to point when what it reads
    does not hold the answer); unlike the share it does not fall because near-miss spans surround the answer, so
    it reads the same in one passage as in five. None where confidence is None.
    """

    text: str
    kind: str
    passage: int
    sentence: str
    start: int
    end: int
    score: float
    in_title: bool = False
    span_score: float = 0.0
    sentence_score: float = 0.0
    confidence: float | None = None
    margin: float | None = None
    rule: str = ""  # the reader's rule that answered: "yes_no", "claim", "compared" (by values)


TRAINING_COMMAND = "python -m cragraph_lab bench reader-training"


class ReaderWeightsError(RuntimeError):
    """The reader's weights are missing or unreadable: names the file and how to rebuild it."""

    def __init__(self, path: object, why: str) -> None:
        super().__init__(
            f"reader weights {path}: {why}. Rebuild them with `{TRAINING_COMMAND} --out <folder>` "
            "or set [answer] reader_path (CRAGRAPH_ANSWER__READER_PATH) to a folder holding reader.npz and config.json"
        )
        self.path = path
