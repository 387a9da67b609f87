""" "Which is older / longer / first, A or B?": read the compared attribute for both options and compare.

Why: a span pointer sees the two options but not which one the numbers favour. For a comparative question the
answer follows from one value per option: a year for time comparisons (founded first, born earlier, older),
a quantity for size comparisons (longer, taller, larger). Each option's value is read from its own passage (the
one whose title names it, else the first that mentions it): the first year of the passage for time (the
opening of an encyclopedic passage gives the birth or founding year first), the first quantity near a mention
of the attribute's unit words otherwise. A rank ("the 13th highest", "第13") or a name with a number in it
("K4") is not a size. Nothing found for either option: None, and the caller falls back to the span scores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cragraph.reader.types import Passage

# (pattern, kind, sign): sign +1 = the larger value wins, -1 = the smaller value wins
_COMPARATIVES: tuple[tuple[re.Pattern[str], str, int], ...] = (
    (
        re.compile(r"\b(?:older|oldest|earlier|earliest|first|sooner)\b|раньше|первы|старше|старее|更早|最早", re.I),
        "time",
        -1,
    ),
    (
        re.compile(
            r"\b(?:younger|youngest|later|latest|newer|newest|more recent|most recent)\b|позже|позднее|"
            r"моложе|младше|новее|更晚|最晚",
            re.I,
        ),
        "time",
        +1,
    ),
    (
        re.compile(
            r"\b(?:longer|longest|taller|tallest|larger|largest|bigger|biggest|higher|highest|heavier|"
            r"wider|deeper)\b|длиннее|выше|крупнее|更长|更高|更大",
            re.I,
        ),
        "size",
        +1,
    ),
    (
        re.compile(
            r"\b(?:shorter|shortest|smaller|smallest|lower|lowest|lighter|narrower)\b|короче|ниже|"
            r"更短|更低|更小",
            re.I,
        ),
        "size",
        -1,
    ),
)
_YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")
_NUMBER = re.compile(r"(?<![A-Za-zА-Яа-яЁё第\d.,])(\d{1,3}(?:[,\s]\d{3})+|\d+(?:\.\d+)?)(?![\d])")
_ORDINAL = re.compile(r"(?:st|nd|rd|th)\b|-?(?:й|я|е|го)\b")
_MULTIPLIERS = {
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "тыс": 1e3,
    "млн": 1e6,
    "млрд": 1e9,
    "千": 1e3,
    "万": 1e4,
    "亿": 1e8,
}
_OPENING = 600  # the definitional opening of a passage, where its subject's dates and sizes are given


@dataclass(frozen=True)
class Compared:
    """The winning option, the passage its value came from and the two values."""

    option: str
    passage: int
    values: tuple[float, float]


def comparison_kind(question: str) -> tuple[str, int] | None:
    """("time" | "size", sign) of a comparative question, or None."""
    for pattern, kind, sign in _COMPARATIVES:
        if pattern.search(question):
            return kind, sign
    return None


def compare_options(question: str, options: tuple[str, ...], passages: list[Passage]) -> Compared | None:
    """The option the compared values favour, or None when the question is not comparative, an option's
    passage or value is missing, or the values tie."""
    found = comparison_kind(question)
    if found is None or len(options) != 2:
        return None
    kind, sign = found
    read: list[tuple[float, int]] = []
    for option in options:
        index = _passage_of(option, passages)
        if index is None:
            return None
        value = _value(passages[index], kind)
        if value is None:
            return None
        read.append((value, index))
    (a, pa), (b, pb) = read
    if a == b:
        return None
    first_wins = (a > b) == (sign > 0)
    return Compared(options[0] if first_wins else options[1], pa if first_wins else pb, (a, b))


def _passage_of(option: str, passages: list[Passage]) -> int | None:
    key = _bare(option)
    for i, passage in enumerate(passages):
        if passage.title and _bare(passage.title) == key:
            return i
    for i, passage in enumerate(passages):
        if passage.title and (key in _bare(passage.title) or _bare(passage.title) in key):
            return i
    for i, passage in enumerate(passages):
        if key and key in passage.text.lower():
            return i
    return None


def _bare(name: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", name.strip().lower())


def _value(passage: Passage, kind: str) -> float | None:
    opening = passage.text[:_OPENING]
    if kind == "time":
        match = _YEAR.search(opening)
        return float(match.group(1)) if match else None
    for match in _NUMBER.finditer(opening):
        if _YEAR.fullmatch(match.group(1)) and not _unit_follows(opening, match.end()):
            continue  # a year, not a size
        if _ORDINAL.match(opening, match.end()):
            continue  # a rank, not a size
        number = float(re.sub(r"[,\s]", "", match.group(1)))
        after = opening[match.end() : match.end() + 12].lower()
        for word, factor in _MULTIPLIERS.items():
            if after.lstrip().startswith(word):
                number *= factor
                break
        return number
    return None


def _unit_follows(text: str, end: int) -> bool:
    return bool(re.match(r"\s*(?:km|m|ft|metres|meters|miles|kg|tons|км|м|公里|米)\b", text[end : end + 12]))
