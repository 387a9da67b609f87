"""The second hop's question of a bridge, written from the link that found it (DecompRC's bridging, Min et al.
2019): the part of the question the first hop answered is replaced by the entity it led to, so "Where was the
founder of Veltrane Systems born?", with Veltrane Systems' page linking Ingrid Solvang's by "Veltrane Systems was
founded by Ingrid Solvang", is read over her page as "Where was the Ingrid Solvang born?".

The first hop answered the named page's title and the relation the linking sentence states ("founded"), unless
the linked page says that word elsewhere than where it names the named page back: her page's "born in Skarnvik"
leaves "born" for the second hop to ask, her "she founded Veltrane Systems" does not keep "founder". The replaced
part is the run of such words around the title, across at most GAP other words, in any language: words are matched
by their five-letter roots, Chinese characters by the two-character terms they stand in.
"""

from __future__ import annotations

import re

from rag.answering.rules.compare import sentences
from rag.reader.names import root, roots
from stores.scripts import HAN, HAN_CLASS
from stores.tokenize import tokenize

GAP = 2  # words (or Chinese characters) that may stand between two words the first hop answered
_UNIT = re.compile(rf"[{HAN_CLASS}]|[^\W_{HAN_CLASS}]+")  # a Chinese character, or a word
_OPENING, _CLOSING = "«“\"'「『", "»”\"'」』"
_PARENTHESES = re.compile(r"\s*[(（][^)）]*[)）]")


def bridged_question(question: str, named: str, sentence: str, linked: str, linked_text: str) -> str:
    """`question` with the words the first hop answered (`named`'s title and the relation `sentence` states about
    it) replaced by `linked`, the title of the page that sentence names, whose text is `linked_text`; the question
    unchanged when it holds none of `named`'s words."""
    units = [(m.start(), m.end(), m.group()) for m in _UNIT.finditer(question)]
    keys = [_keys(units, i) for i in range(len(units))]
    title = _terms(_PARENTHESES.sub("", named))
    elsewhere = " ".join(s for s in sentences(linked_text) if not _terms(s) & title)
    answered = title | (_terms(sentence) - _terms(elsewhere))
    anchors = [i for i, own in enumerate(keys) if own & title]
    if not anchors:
        return question
    taken = [i for i, own in enumerate(keys) if own & answered]
    first, last = min(anchors), max(anchors)
    grown = True
    while grown:
        grown = False
        for i in taken:
            if first - GAP - 1 <= i < first or last < i <= last + GAP + 1:
                first, last, grown = min(first, i), max(last, i), True
    start, end = units[first][0], units[last][1]
    if start > 0 and end < len(question) and question[start - 1] in _OPENING and question[end] in _CLOSING:
        start, end = start - 1, end + 1  # «Сверкан» as a whole
    return f"{question[:start]}{spoken(linked, linked_text)}{question[end:]}"


def spoken(title: str, text: str) -> str:
    """A page title as its page says it: without its parenthesized qualifier, and a catalogue name "Surname, Given
    Names" in the order the page writes it ("Лесницкая, Варвара Петровна" -> "Варвара Петровна Лесницкая")."""
    title = _PARENTHESES.sub("", title).strip()
    parts = [part.strip() for part in title.split(",")]
    if len(parts) == 2 and all(parts) and title not in text and f"{parts[1]} {parts[0]}" in text:
        return f"{parts[1]} {parts[0]}"
    return title


def _terms(text: str) -> set[str]:
    """Roots of a text's words and its two-character Chinese terms."""
    return roots(text) | {term for term in tokenize(text) if HAN.match(term)}


def link_terms(text: str) -> set[str]:
    """Roots of a text's words and its Chinese characters one by one: a relation said in other words ("出生地",
    "生于") still shares a character."""
    return roots(text) | set(HAN.findall(text))


def _keys(units: list[tuple[int, int, str]], at: int) -> set[str]:
    """What a unit of the question matches: a word's root (none for a stop word), a Chinese character's
    two-character terms with its neighbours."""
    text = units[at][2]
    if not HAN.match(text):
        return {root(term) for term in tokenize(text)}
    pairs = set()
    for left, right in ((at - 1, at), (at, at + 1)):
        if left >= 0 and right < len(units) and units[left][1] == units[right][0] \
                and all(HAN.match(units[k][2]) for k in (left, right)):
            pairs.add(units[left][2] + units[right][2])
    return {pair.lower() for pair in pairs}


def unasked(sentence: str, question: str) -> str:
    """The sentence without the words the question says (Chinese: without its characters): what is left names
    the page the sentence links to ("Родился в 1981 году в Кремнёве" for "... где родился Олег Самарин?" -> "в
    1981 году в Кремнёве"), so a search for it finds that page, not the pages sharing the question's words."""
    asked = roots(question)
    kept = ""
    for unit in _UNIT.findall(sentence):
        if HAN.match(unit):
            kept += "" if unit in question else unit
        elif not roots(unit) & asked:
            kept += f" {unit} "
    return " ".join(kept.split()) or sentence
