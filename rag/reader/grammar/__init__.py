"""The words the reader's rules look for, one module per language (en, ru, zh), read by one matcher.

Why: the same ideas ("both", "the same", "earlier than", a unit of length) were written as a separate regular
expression wherever a rule needed them, each with its own idea of a word boundary. Here a concept is a word list
per language, and `find` / `says` / `opens_with` match every list alike: a Latin or Cyrillic entry is a whole word
(an entry ending in "-" is a stem: any word starting with it), case aside; a Chinese entry is found anywhere (Chinese
has no spaces between words). The lists are written in simplified characters: the reader folds text first.
"""

from __future__ import annotations

from collections.abc import Iterable

from rag.reader.grammar import en, ru, zh
from stores.scripts import CJK

LANGUAGES = (en, ru, zh)


def words(concept: str) -> tuple[str, ...]:
    """The concept's words in every language that declares it."""
    return tuple(w for language in LANGUAGES for w in getattr(language, concept, ()))


def _merged_attributes() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    merged: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for language in LANGUAGES:
        for name, (cues, stated) in language.ATTRIBUTES.items():
            had = merged.get(name, ((), ()))
            merged[name] = (had[0] + cues, had[1] + stated)
    return merged


ATTRIBUTES = _merged_attributes()
"""A compared attribute's name -> (the question's cue words, the words a page states it with), every language."""
UNITS = tuple(unit for language in LANGUAGES for unit in language.UNITS)
"""(the words of a unit, its factor to one measure), areas before lengths within each language."""
MONTHS = tuple(tuple(w for language in LANGUAGES for w in language.MONTHS[m]) for m in range(12))
"""Each month's words in every language, January first."""


def when_question(subject: str, language: str) -> str:
    """The question that asks when `subject` (an event: "the opening of the Hollins Depot hub") happened."""
    return {"ru": ru, "zh": zh}.get(language, en).WHEN.format(subject)


def comparative(text: str, concept: str) -> list[tuple[int, int]]:
    """Where a comparative of `concept` (EARLIER, LATER, MORE, LESS) stands: its words, and Chinese "比 ... 早"."""
    return find(text, words(concept)) + zh.than_spans(text, getattr(zh, f"THAN_{concept}"))


def find(text: str, entries: Iterable[str]) -> list[tuple[int, int]]:
    """Every (start, end) in `text` where one of `entries` stands, in order of position."""
    lowered = text.lower()
    found = []
    for entry in entries:
        stem = entry.endswith("-")
        needle = entry.rstrip("-").lower()
        at = lowered.find(needle)
        while at >= 0:
            end = at + len(needle)
            if CJK.match(needle) or (_boundary(lowered, at - 1) and (stem or _boundary(lowered, end))):
                found.append((at, _word_end(lowered, end) if stem else end))
            at = lowered.find(needle, at + 1)
    return sorted(found)


def says(text: str, entries: Iterable[str]) -> bool:
    return bool(find(text, entries))


def opens_with(text: str, entries: Iterable[str]) -> bool:
    """`text` begins with one of `entries` (a unit after a number: "km", "kilomet-")."""
    return any(start == 0 for start, _ in find(text[:40], entries))


def _boundary(text: str, at: int) -> bool:
    """No letter or digit at `at` (a word boundary on that side)."""
    return at < 0 or at >= len(text) or not (text[at].isalnum() or text[at] == "_") or bool(CJK.match(text[at]))


def _word_end(text: str, at: int) -> int:
    while at < len(text) and not _boundary(text, at):
        at += 1
    return at
