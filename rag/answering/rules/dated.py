""" "Which came first: A or B?" over documents that date events: the reader is asked when each option happened
("When was the opening of the Hollins Depot hub?"), the dates it points at are compared (the year, then the month
when both name one), and the earlier (later) option is answered, cited where its date was read.

Why: compare.py reads a year from an option's own page or from a sentence that names the option as asked; a report
names an event in its own words ("Project Lantern (March 2021 – December 2024)"), not as the question does ("the
start of Project Lantern"), and two events of one year differ only in their months.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.answering.rules.compare import YEAR
from rag.reader import grammar
from rag.reader.names import roots
from rag.reader.types import Passage, ReaderAnswer
from stores.scripts import HAN

if TYPE_CHECKING:  # the reader module imports torch; loaded on first use only
    from rag.reader.reader import Reader

_NOT_NAMES = frozenset(["the", "which", "when"])
_NEAR = 16  # characters between a year and the month word that goes with it ("March 2021", "2021年3月")


def date_of(text: str) -> tuple[int, int | None] | None:
    """(year, month or None) of the first date a short text names ("March 2021 – December 2024" -> (2021, 3),
    "апреля 2022 года" -> (2022, 4), "2021年3月" -> (2021, 3)); None when it names no year."""
    year = YEAR.search(text)
    if year is None:
        return None
    found = [(s, e, m) for m, entries in enumerate(grammar.MONTHS, start=1) for s, e in grammar.find(text, entries)]
    found = [f for f in found if not any(o != f and o[0] <= f[0] and f[1] <= o[1] for o in found)]  # "1月" in "11月"
    apart = [(max(year.start() - e, s - year.end()), m) for s, e, m in found]  # characters between month and year
    near = [(gap, m) for gap, m in apart if gap <= _NEAR]
    return int(year.group(1)), (min(near)[1] if near else None)


def speaks_of(sentence: str, option: str) -> bool:
    """The sentence a date was read from names the option: the root of one of its names (a capitalised or quoted
    word) when it has any, two characters of it in a row in Chinese. A date read from a sentence about something
    else (the reader's best span for "When was the sale of X?" in a sentence about Y) dates nothing."""
    if HAN.search(option):
        return any(option[i:i + 2] in sentence for i in range(len(option) - 1))
    words = [w.strip("«»\"'“”()") for w in option.split()]
    names = [w for w in words if len(w) >= 3 and w[:1].isupper() and w.lower() not in _NOT_NAMES]
    return not names or bool(roots(" ".join(names)) & roots(sentence))  # in any inflection: «Калиновая» / «Калиновой»


def earlier(a: tuple[int, int | None], b: tuple[int, int | None]) -> int | None:
    """-1 when a comes before b, 1 after, None when the dates do not tell (one year, a month missing or equal)."""
    if a[0] != b[0]:
        return -1 if a[0] < b[0] else 1
    if a[1] is None or b[1] is None or a[1] == b[1]:
        return None
    return -1 if a[1] < b[1] else 1


def dated_answer(reader: Reader, options: tuple[str, ...], passages: list[Passage], language: str,
                 sign: int) -> ReaderAnswer | None:
    """The option whose date the comparison favours (sign -1: the earlier), as written in the passage its date
    was read from; None when a date is missing, the dates do not tell, or that passage names no part of it."""
    dated = []
    for option in options:
        read = reader.read(grammar.when_question(option, language), passages, language)
        when = date_of(read.text) if read is not None and speaks_of(read.sentence, option) else None
        if read is None or when is None:
            return None
        dated.append((when, read))
    order = earlier(dated[0][0], dated[1][0])
    if order is None:
        return None
    won = 0 if (order < 0) == (sign < 0) else 1
    read = dated[won][1]  # the option as the question words it ("the start of Project Lantern"), cited where its
    # date was read: an event is seldom written as asked, and its date's sentence is the evidence
    return ReaderAnswer(options[won], "span", read.passage, read.sentence, -1, -1, 0.0, rule="compared")
