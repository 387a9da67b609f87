""" "Which is older / longer / first, A or B?": read the compared attribute for both options and compare.

Why: a span pointer sees the two options but not which one the numbers favour. For a comparative question the
answer follows from one value per option: a year for time comparisons (founded first, born earlier, older),
a quantity for size comparisons (longer, taller, larger). Each option's value is read from its own passage (the
one whose title names it, else the first that mentions it), from the sentence that speaks of the compared
attribute (the one sharing the most terms with the question, the options' names left out; the earlier one on a
tie, so a passage that never names the attribute gives its first value): a year for time, a quantity otherwise.
A rank ("the 13th highest", "第13") or a name with a number in it ("K4") is not a size. Nothing found for either
option: None, and the caller falls back to the span scores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.reader import grammar
from rag.reader.names import named_pages
from rag.reader.types import Passage
from stores.scripts import HAN
from stores.tokenize import tokenize

# (concept, kind, sign): sign +1 = the larger value wins, -1 = the smaller value wins; checked in this order
_COMPARATIVES = (("EARLIER", "time", -1), ("LATER", "time", +1), ("MORE", "size", +1), ("LESS", "size", -1))
YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")
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
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")  # a list item ("- Length: 640 metres") is a sentence


@dataclass(frozen=True)
class Compared:
    """The winning option, the passage its value came from and the two values."""

    option: str
    passage: int
    values: tuple[float, float]


def comparison_kind(question: str) -> tuple[str, int] | None:
    """("time" | "size", sign) of a comparative question, or None."""
    for concept, kind, sign in _COMPARATIVES:
        if grammar.comparative(question, concept):
            return kind, sign
    return None


def comparatives(question: str) -> list[tuple[int, int]]:
    """Where the question's comparative words stand."""
    return [span for concept, _, _ in _COMPARATIVES for span in grammar.comparative(question, concept)]


def compare_options(question: str, options: tuple[str, ...], passages: list[Passage]) -> Compared | None:
    """The option the compared values favour, or None when the question is not comparative, an option's value
    is missing (from its page, or for an option without one from where another page names it), or the values
    tie."""
    found = comparison_kind(question)
    if found is None or len(options) != 2:
        return None
    kind, sign = found
    attribute = attribute_terms(question, " ".join(options))
    read: list[tuple[float, int]] = []
    for option in options:
        index = page_of(option, passages)
        value = attribute_value(passages[index], kind, attribute, options) if index is not None else None
        if index is None and (mention := mention_value(option, options, passages, kind, attribute)):
            value, index = mention
        if value is None or index is None:
            return None
        read.append((value, index))
    (a, pa), (b, pb) = read
    if a == b:
        return None
    first_wins = (a > b) == (sign > 0)
    return Compared(options[0] if first_wins else options[1], pa if first_wins else pb, (a, b))


def page_of(option: str, passages: list[Passage]) -> int | None:
    """The passage whose title names the option; None when none does. A rule compares only what it has the
    options' own pages for: a passage that merely mentions an option says nothing of its attributes, and with
    an option's page missing (a question about what the documents do not hold) the rule would still choose."""
    key = _bare(option)
    for i, passage in enumerate(passages):
        if passage.title and _bare(passage.title) == key:
            return i
    for i, passage in enumerate(passages):
        if passage.title and (key in _bare(passage.title) or _bare(passage.title) in key):
            return i
    named = named_pages(option, [passage.title for passage in passages])
    return named[0] if named else None  # "Мирон Калугин" names "Калугин, Мирон Сергеевич"


def mentioned(option: str, passages: list[Passage]) -> bool:
    """Some passage names the option in its text."""
    key = _bare(option)
    return bool(key) and any(key in p.text.lower() for p in passages)


def mention_value(option: str, options: tuple[str, ...], passages: list[Passage], kind: str,
                  attribute: set[str]) -> tuple[float, int] | None:
    """An option without a page of its own, read where another page names it ("its sister ship, the Corriewynd,
    was launched in 1936"): the value after the name in the sentence that best speaks of the attribute, or
    before it when the sentence names no other option; None when no sentence speaking of it gives one."""
    key = _bare(option)
    others = [_bare(o) for o in options if _bare(o) != key]
    found: list[tuple[int, float, int]] = []
    for index, passage in enumerate(passages):
        for sentence in sentences(passage.text):
            at = sentence.lower().find(key)
            if at < 0:
                continue
            after = sentence[at + len(key):]
            cut = min((i for o in others if (i := after.lower().find(o)) >= 0), default=len(after))
            value = _value(after[:cut], kind)
            if value is None and not any(o in sentence.lower() for o in others):
                value = _value(sentence[:at], kind)
            # a one-character Chinese attribute word ("长") stands inside the sentence's character pairs ("船长")
            shared = len(attribute & set(tokenize(sentence))) + any(
                len(term) == 1 and HAN.match(term) and term in sentence for term in attribute)
            if value is not None and shared:  # a sentence that says nothing of the attribute gives no value
                found.append((shared, value, index))
    if not found:
        return None
    _, value, index = max(found, key=lambda f: f[0])
    return value, index


def _bare(name: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", name.strip().lower())


def attribute_terms(question: str, names: str) -> set[str]:
    """The terms of the compared attribute: the question's without the compared names, and the words passages
    state the attribute with ("longer" -> long, length)."""
    attribute = set(tokenize(question)) - set(tokenize(names))
    for cues, stated in grammar.ATTRIBUTES.values():
        if grammar.says(question, cues):
            attribute |= set(tokenize(" ".join(stated)))
    return attribute


def question_value(question: str, name: str, kind: str) -> float | None:
    """The value the question itself gives to compare with ("more than 200 metres", "до 1990 года"), the
    compared name left out (a number in a name is not the value)."""
    return _value(question.replace(name, " "), kind)


def attribute_value(passage: Passage, kind: str, attribute: set[str], names: tuple[str, ...] = ()) -> float | None:
    """The value of the passage's sentence that best matches the attribute's terms and holds one. The page's own
    name and the other compared `names` hold no value ("The Halcyon 3 sells for £290", "it replaced the Marlin
    4")."""
    unvalued = sorted({_bare(name) for name in (passage.title, *names) if name.strip()}, key=len, reverse=True)
    named = re.compile("|".join(map(re.escape, unvalued)), re.I) if unvalued else None
    said = [named.sub(" ", sentence) if named else sentence for sentence in sentences(passage.text)]
    ranked = sorted(range(len(said)), key=lambda i: (-len(attribute & set(tokenize(said[i]))), i))
    for i in ranked:
        value = _value(said[i], kind)
        if value is not None:
            return value
    return None


def sentences(text: str) -> list[str]:
    """The text's sentences, a list item one of its own."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


def _value(opening: str, kind: str) -> float | None:
    if kind == "time":
        match = YEAR.search(opening)
        return float(match.group(1)) if match else None
    for match in _NUMBER.finditer(opening):
        if YEAR.fullmatch(match.group(1)) and not _unit_follows(opening, match.end()):
            continue  # a year, not a size
        if _ORDINAL.match(opening, match.end()):
            continue  # a rank, not a size
        number = float(re.sub(r"[,\s]", "", match.group(1)))
        after = opening[match.end() : match.end() + 16].lower().lstrip()
        for word, factor in _MULTIPLIERS.items():
            if after.startswith(word):
                number *= factor
                after = after[len(word):].lstrip(" .")
                break
        unit = next((factor for entries, factor in grammar.UNITS if grammar.opens_with(after, entries)), 1.0)
        return number * unit
    return None


def _unit_follows(text: str, end: int) -> bool:
    after = text[end : end + 16].lower().lstrip()
    return any(grammar.opens_with(after, entries) for entries, _ in grammar.UNITS)
