"""A Russian or Chinese yes / no claim about two joined subjects, split into one claim per subject.

Why: "Андрей Гладышев и Олег Самарин оба родились в Кремнёве?" and "方若琳和杜鸣远出生在同一个镇吗？" are two claims,
one per subject. Read whole, the claim's value looked like the second subject ("Что Варвара Лесницкая и?"), and a
"before 1900" claim about both compared the two pages with each other. Split (DecompRC's intersection type), each
part is a claim about one subject that the single-subject readings decide: "both" holds when each part holds,
"the same" when the question each part hides ("Где родились Варвара Лесницкая?") is answered with one name for
both. English questions of this kind stay with claims.paired_claim, which reads the two pages' own sentences: on
the training corpora it answered them better than the parts read alone, and in Russian and Chinese worse.

The split is by grammar: the conjunction between the subjects (и, "и A, и B", 和 / 与), the second subject ending
where the predicate begins (a verb, "оба", a preposition; LAC's word tags for Chinese).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rag.answering.rules.hidden_question import RU_LEAD, RU_WORD_LI, claim_words
from stores.ner import russian_predicate

_RU_BOTH = {"оба", "обе"}
_RU_PREPOSITIONS = {"в", "во", "на", "до", "после", "с", "со", "из", "у", "при", "под", "над", "за", "от", "к", "по"}
# "в одном (и том же) городе", "в том же году": the shared value a "same" claim asks for
_RU_SAME = re.compile(r"(?:(в|во|на)\s+)?(?:одн\w+(?:\s+и\s+т\w+\s+же)?|т(?:ом|ой|от|у)\s+же)\s+(\w+)", re.I)
_ZH_CONJUNCTIONS = ("和", "与", "跟", "同", "及")
_ZH_BOTH = ("都", "均")
_ZH_SAME = re.compile(r"同一[个座家所条间位]?|相同的?|一样的?")
_TIME_WORDS = {"годы", "году", "год", "года"}


# the two subjects, and what makes a subject's part (its claim or hidden question, and whether it is "the same")
_Split = tuple[tuple[str, str], Callable[[str], tuple[str, bool]]] | None


@dataclass(frozen=True)
class Coordinated:
    """The claim made of each subject ("both"), or the question each hides when the claim is that the two share
    one value ("the same")."""

    subjects: tuple[str, str]
    parts: tuple[str, str]
    same: bool


def coordinated(question: str, language: str) -> Coordinated | None:
    """The question's two single-subject parts, or None when it does not join two subjects under one claim."""
    splitter = {"ru": _russian, "zh": _chinese}.get(language)
    split = splitter(question.strip()) if splitter is not None else None
    if split is None:
        return None
    subjects, make = split
    if not all(subjects):
        return None
    (first, same), (second, _) = make(subjects[0]), make(subjects[1])
    return Coordinated(subjects, (first, second), same)


def _russian(question: str) -> _Split:
    body = RU_LEAD.sub("", question.rstrip(" ?!.")).strip()
    verb = ""
    if (lead := RU_WORD_LI.match(body)) is not None:
        verb, body = lead.group(1), body[lead.end():].lstrip()
    if body.lower().startswith("и ") and ", и " in body:  # "и A, и B ..."
        first, rest = body[2:].split(", и ", 1)
        explicit = True
    elif " и " in body:
        first, rest = body.split(" и ", 1)
        explicit = False
    else:
        return None
    words = rest.split()
    end = next((i for i, w in enumerate(words) if i and _ru_predicate_start(w)), None)
    if end is None or len(words[:end]) > 6 or len(first.split()) > 6 or any(map(russian_predicate, first.split())):
        return None
    second = " ".join(words[:end])
    tail = [w for w in words[end:] if w.lower() not in _RU_BOTH]
    both = explicit or len(tail) < len(words[end:])
    predicate = " ".join(tail)
    same = _RU_SAME.search(predicate)
    if not (both or same):
        return None

    def make(subject: str) -> tuple[str, bool]:
        if same is not None:
            word = "Когда" if same.group(2).lower() in _TIME_WORDS else "Где" if same.group(1) else "Что"
            rest = (predicate[:same.start()] + predicate[same.end():]).strip()
            asked = " ".join(w for w in (word, verb.lower(), rest, subject) if w)
            return asked + "?", True
        return (f"{verb} ли {subject} {predicate}" if verb else f"{subject} {predicate}") + "?", False

    return (first.strip(" ,"), second.strip(" ,")), make


def _ru_predicate_start(word: str) -> bool:
    lowered = word.lower()
    return lowered in _RU_BOTH or lowered in _RU_PREPOSITIONS or russian_predicate(word)


def _chinese(question: str) -> _Split:
    words = claim_words(question)
    at = next((i for i, (w, t) in enumerate(words) if w in _ZH_CONJUNCTIONS and t == "c"), None)
    if not at:
        return None
    end = next((i for i in range(at + 2, len(words))
                if words[i][1] in ("v", "p", "d", "vd", "ad") or words[i][0].startswith(_ZH_BOTH)), None)
    if end is None:
        return None
    first = "".join(w for w, _ in words[:at])
    second = "".join(w for w, _ in words[at + 1:end])
    predicate = "".join(w for w, _ in words[end:])
    both = predicate.startswith(_ZH_BOTH)
    predicate = predicate[1:] if both else predicate
    same = _ZH_SAME.search(predicate)
    if not (both or same):
        return None

    def make(subject: str) -> tuple[str, bool]:
        if same is not None:
            word = "哪一" if predicate[same.end():same.end() + 1] == "年" else "哪个"
            return f"{subject}{predicate[:same.start()]}{word}{predicate[same.end():]}？", True
        return f"{subject}{predicate}吗？", False

    return (first, second), make
