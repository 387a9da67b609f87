"""One candidate answer: what was read, how, from which passage, and along which hops."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from rag.reader.types import ReaderAnswer
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


def named_by(passage: dict[str, Any], asked: set[str]) -> bool:
    """The passage is about something the question names (its title's terms are all in the question's, `asked`)."""
    terms = set(tokenize(passage.get("title") or ""))
    return bool(terms) and terms <= asked


def names_same(title: str, text: str) -> bool:
    """A page's title and an answer name one entity: the terms of one hold the other's, in any order and
    inflection ("Осокорин, Глеб Андреевич" / "Глеба Осокорина", "Сабуров, Павел Евграфович" / "Павла
    Евграфовича Сабурова", "Tальвея (компания)" / "Тальвея")."""
    a, b = set(tokenize(title)), set(tokenize(text))
    return bool(a and b) and (_terms_within(a, b) or _terms_within(b, a))


def names_in(name: str, text: str) -> bool:
    """The text names the entity: every term of the name stands in it, in any inflection."""
    terms = set(tokenize(name))
    return bool(terms) and _terms_within(terms, set(tokenize(text)))


def _terms_within(few: set[str], many: set[str]) -> bool:
    return all(any(_one_term(term, other) for other in many) for term in few)


_CYRILLIC = re.compile(r"[а-яё]")


def _one_term(a: str, b: str) -> bool:
    """One stemmed term in two inflections. The stemmer cuts a Russian name's case endings unevenly ("сабур" /
    "сабуров", "горд" / "горде", "павел" / "павл" with its fleeting vowel), so Cyrillic terms of four letters
    or more meet when they part at most at the shorter one's last letter and the longer one goes on for an
    ending's length at most ("вельт" of the river is not "вельтогорск", its town)."""
    if a == b:
        return True
    shorter, common = min(len(a), len(b)), len(os.path.commonprefix([a, b]))
    return (shorter >= 4 and bool(_CYRILLIC.match(a)) and bool(_CYRILLIC.match(b))
            and common >= shorter - 1 and max(len(a), len(b)) - common <= 3)


READINGS = ("one_pass", "hop_chain", "per_passage", "linked", "yes_no", "compared", "claim")


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
    items: list[str] = field(default_factory=list)  # a list answer's items (rag.answering.lists)
    listed: int = 0  # how many items its list had (more than `items` holds when it was cut)
    list_form: str = ""  # "block" or "sentence" (rag.answering.lists.list_at)
    look_alike: bool = False  # read from the page of a look-alike of a named entity (about_a_look_alike)

    @property
    def text(self) -> str:
        return ", ".join(self.items) if self.items else " ".join(self.read.text.split())

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
            **({"items": len(self.items)} if self.items else {}),
        }


def said_terms(candidate: Candidate) -> set[str]:
    """The terms of what the candidate stands on: its sentence, its page's title, and every earlier hop's
    page title and answer sentence."""
    parts = [candidate.read.sentence, candidate.passage.get("title") or ""]
    for step in candidate.chain[:-1]:
        parts.append(step["passage"].get("title") or "")
        parts += [step["sentence"]] if step.get("sentence") else sentences_holding(step["passage"].get("text") or "",
                                                                                  step["answer"])
    return set(tokenize(" ".join(parts)))


def about_a_look_alike(candidate: Candidate, entities: list[set[str]]) -> bool:
    """The candidate is read from the page of a look-alike of an entity the question names (the page's title
    shares part of the entity's name and has a name term of its own: "MV Corriebell" for "MV Corriedale", "River
    Caldry" for "River Ostrel"), in a sentence that does not name the entity itself: it answers about the
    look-alike ("She was launched in 1934"), whatever the entity's own page would say. A page named by a part of
    the entity's name ("Scorpion" for "Scorpiones und Pedipalpi") is no look-alike. `entities`: each named
    entity's terms."""
    title = set(tokenize(candidate.passage.get("title") or ""))
    if not title or candidate.read.rule:
        return False
    said = said_terms(candidate)
    return any(entity & title and not title <= entity and not all(_held(term, said) for term in entity)
               for entity in entities)


def _held(term: str, said: set[str]) -> bool:
    """The term is said, or a longer or shorter form of it (an entity's lemma "ларион" for "Ларионова")."""
    return term in said or (len(term) >= 4 and any(len(s) >= 4 and (s.startswith(term) or term.startswith(s))
                                                   for s in said))
