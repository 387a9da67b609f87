"""One candidate answer: what was read, how, from which passage, and along which hops."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from cragraph.reader.types import ReaderAnswer
from stores.tokenize import tokenize

# How a candidate was read: the whole question in one pass, a planned question along its hops, the whole
# question over one passage alone or over a page that a page the question names links to, or by a rule of the
# reader's: yes / no, one of two named options by the span scores, or by their compared values ("which is
# older": each one's year).
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def sentences_holding(text: str, answer: str) -> list[str]:
    """The sentences of `text` in which `answer` stands (a hop's evidence)."""
    return [s.strip() for s in _SENTENCE.split(text) if answer and answer in s]


_SPACES = re.compile(r"\s+")


def normal(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def same_answer(a: str, b: str) -> bool:
    """One answer in two wordings: either holds the other ("Hammerfest" / "Hammerfest, Norway")."""
    a, b = normal(a), normal(b)
    return bool(a and b) and (a in b or b in a)


def names_same(title: str, text: str) -> bool:
    """A page's title and an answer name one entity: the terms of one hold the other's, in any order and
    inflection ("Осокорин, Глеб Андреевич" / "Глеба Осокорина", "Tальвея (компания)" / "Тальвея")."""
    a, b = set(tokenize(title)), set(tokenize(text))
    return bool(a and b) and (a <= b or b <= a)


READINGS = ("one_pass", "hop_chain", "per_passage", "linked", "yes_no", "options", "compared")


@dataclass
class Candidate:
    """`passage` is the passage dict it cites (a context passage or a hop's); `chain` the hops it was read
    along, first hop first: {"question", "answer", "passage"} each."""

    read: ReaderAnswer
    reading: str
    passage: dict[str, Any]
    rank: int = 0
    chain: list[dict[str, Any]] = field(default_factory=list)
    features: dict[str, float] = field(default_factory=dict)
    probability: float = 0.0

    @property
    def text(self) -> str:
        return " ".join(self.read.text.split())

    def summary(self) -> dict[str, Any]:
        """What the trace shows of it."""
        return {
            "answer": self.text,
            "reading": self.reading,
            "probability": round(self.probability, 4),
            "passage_id": self.passage.get("id"),
            "chain": [{"question": h["question"], "answer": h["answer"], "passage_id": h["passage"].get("id")}
                      for h in self.chain],
            "features": {name: round(value, 4) for name, value in self.features.items()},
        }
