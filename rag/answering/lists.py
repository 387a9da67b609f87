"""List answers: a question that asks for several things ("What are the components of X?", "Which towns ...?",
"Перечислите ...", "Какие проекты ...", "有哪些 ...") is answered with every item of the list the reader points at.

The reader gives one span; where it stands says which list the document gives: an item of a bullet or numbered
block (the whole block), a cell of a table (its column), a sentence that introduces a block ("X consists of five
components:" followed by the list: the block), or a coordination ("the Keyring and Turnstile plugins", "A, B и C":
its members). The block is looked for in the whole section the passage lies in (a list seldom fits in one chunk),
and each item is cut to its head ("**Portico** — the gateway ..." -> "Portico"). Items of the same list found from
other passages (the same block reached twice, a list continued in another section) are gathered, each cited.
The candidate keeps the signals of the span it grew from, so the decision judges whether the reader pointed at the
right list; it also sees that the answer is a list and how many items it has.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from rag.answering.candidates import Candidate, normal
from stores.markdown_tables import TABLE_ROW, TABLE_RULE
from stores.scripts import HAN

_HAN_NUMERALS = frozenset("一二两三四五六七八九十")
MAX_ITEMS = 200  # a longer list is cut here, and the answer says how many it had
Section = Callable[[dict[str, Any]], tuple[str, int]]
"""The text of the section a passage lies in, and where the passage's text starts in it."""

_LIST_LINE = re.compile(
    r"^[ \t]*(?:[-*+•‣▪—–]|\d{1,3}[.)]|\(?[a-zа-я]\)|[（(]\d{1,3}[)）])[ \t]+(?P<item>\S.*?)[ \t]*$", re.I)
_BOLD = re.compile(r"^\*\*(?P<head>[^*]+?)[.:：]?\*\*")
_HEAD_END = re.compile(r"\s+[—–-]\s+|:\s|：|\s\(|（|\.\s|。|；|;|，|,\s")
_SEPARATORS = re.compile(
    r"\s*(?:,|;|、|，|；)\s*(?:and\s+|or\s+|и\s+|или\s+)?|\s+(?:and|or|и|или)\s+|(?<=\S)[和及与](?=\S)")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_MARKUP = re.compile(r"\*\*|__|`|\[(?P<label>[^\]]*)\]\([^)]*\)")


def with_lists(candidates: Sequence[Candidate], section: Section) -> list[Candidate]:
    """The candidates, each span that points into a list replaced by the list (its items on the candidate), the
    items of one list reached from several candidates gathered on each."""
    expanded: list[Candidate] = []
    for candidate in candidates:
        items, form = _list_for(candidate, section) if candidate.read.kind == "span" and not candidate.read.in_title \
            else ([], "")
        expanded.append(replace(candidate, items=items[:MAX_ITEMS], listed=len(items), list_form=form)
                        if len(items) > 1 else candidate)
    return expanded


def _list_for(candidate: Candidate, section: Section) -> tuple[list[str], str]:
    text, offset = section(candidate.passage)
    span = candidate.read.text
    # the passage read may be a refined strip of the chunk (sentences left out), so its offsets need not hold in the
    # section: the span's occurrence nearest to where they point is taken
    found = [m.start() for m in re.finditer(re.escape(span), text)] if span else []
    if not found:
        text, found = candidate.passage.get("text") or "", [candidate.read.start]
    start = min(found, key=lambda f: abs(f - offset - candidate.read.start))
    return list_at(text, start, start + len(span))


def list_at(text: str, start: int, end: int) -> tuple[list[str], str]:
    """The items of the list that the span text[start:end] belongs to or introduces ([] when it is in none), and the
    list's form: "block" (bullet or numbered lines, a table's column: the document laid the list out) or "sentence"
    (a coordination cut from running text, whose edges are a guess)."""
    lines = _lines(text)
    at = next((i for i, (s, e, _) in enumerate(lines) if s <= start < max(e, s + 1)), None)
    if at is None:
        return [], ""
    line = lines[at][2]
    if block := _block(lines, at):
        return _heads(block), "block"
    if TABLE_ROW.match(line):
        return _column(lines, at, start - lines[at][0]), "block"
    following = next((i for i in range(at + 1, len(lines)) if lines[i][2].strip()), None)
    if following is not None and _introduces(line, start - lines[at][0]):
        if _LIST_LINE.match(lines[following][2]):
            return _heads(_block(lines, following)), "block"
        if TABLE_ROW.match(lines[following][2]):  # "... the following centres:" over a table: its first column
            return _column(lines, following, None), "block"
    span = text[start:end]
    if _small_count(span) and (after := _block_after_paragraph(lines, at)):
        return after, "block"
    if coordinated := _coordinated(line, start - lines[at][0], end - lines[at][0]):
        return coordinated, "sentence"
    return (_block_after_paragraph(lines, at), "block") if _counts(span) else ([], "")


def _small_count(span: str) -> bool:
    """The span holds a count ("4 plants", "四座"): it counts the set laid out after its paragraph, and the commas of
    its sentence are no series. A year, a quantity or a decimal ("2024", "250 seats", "£18.4 million") is no count."""
    numbers = "".join(char if char.isdigit() or char in ".," else " " for char in span).split()
    return any(number.isdigit() and len(number) <= 2 for number in numbers) or \
        any(char in _HAN_NUMERALS for char in span)


def _counts(span: str) -> bool:
    """The span counts or describes the set ("four", "пять компонентов", "三类"), not one member of it (a name)."""
    if any(char.isdigit() or char in _HAN_NUMERALS for char in span):
        return True
    return not HAN.search(span) and not _name(span)


def _block_after_paragraph(lines: list[tuple[int, int, str]], at: int) -> list[str]:
    """The items of the list or table that follows the span's paragraph ("The federation operates four plants.
    All are owned by it." over a table of the plants): a paragraph right before a block introduces it."""
    end = next((i for i in range(at + 1, len(lines)) if not lines[i][2].strip()), len(lines))
    block = next((i for i in range(end, len(lines)) if lines[i][2].strip()), None)
    if block is None or block > end + 1:
        return []
    if _LIST_LINE.match(lines[block][2]):
        return _heads(_block(lines, block))
    return _column(lines, block, None) if TABLE_ROW.match(lines[block][2]) else []


def _lines(text: str) -> list[tuple[int, int, str]]:
    found, position = [], 0
    for raw in text.split("\n"):
        found.append((position, position + len(raw), raw))
        position += len(raw) + 1
    return found


def _block(lines: list[tuple[int, int, str]], at: int) -> list[str]:
    """The items of the list around line `at` (an item, or a line it wraps onto) at the pointed item's level. An
    item wraps onto the lines below it that are indented deeper than its marker, a blank line between them or not
    (a wrapped or multi-paragraph item); one blank line may stand between two items."""
    def item(i: int) -> bool:
        return 0 <= i < len(lines) and bool(_LIST_LINE.match(lines[i][2]))

    def indent(i: int) -> int:
        return len(lines[i][2]) - len(lines[i][2].lstrip())

    def blank(i: int) -> bool:
        return 0 <= i < len(lines) and not lines[i][2].strip()

    def wraps(i: int, owner: int) -> bool:  # line i continues the item at line `owner`
        return 0 <= i < len(lines) and not blank(i) and not item(i) and indent(i) > indent(owner)

    def owner_of(i: int) -> int:  # the item a line belongs to, or -1
        j = i
        while j >= 0 and not item(j):
            j -= 1
        return j if j >= 0 and all(wraps(k, j) or blank(k) for k in range(j + 1, i + 1)) and not blank(i) else -1

    def end_of(i: int) -> int:  # the line after the item at line i and the lines it wraps onto
        j = i + 1
        while wraps(j, i) or (blank(j) and wraps(j + 1, i)):
            j += 1
        return j

    def next_item(i: int) -> int:  # the item after the one at line i, over one blank line, or -1
        j = end_of(i)
        if item(j):
            return j
        return j + 1 if blank(j) and item(j + 1) else -1

    def text_of(i: int) -> str:  # the item's words with the lines it wraps onto
        match = _LIST_LINE.match(lines[i][2])
        wrapped = (lines[k][2].strip() for k in range(i + 1, end_of(i)) if not blank(k))
        return " ".join([match.group("item") if match else "", *wrapped])

    pointed = owner_of(at)
    if pointed < 0:
        return []
    first = pointed
    while (previous := next((j for j in range(first - 1, -1, -1) if item(j)), -1)) >= 0 \
            and next_item(previous) == first:
        first = previous
    found, i = [], first
    while i >= 0:
        if indent(i) == indent(pointed):
            found.append(text_of(i))
        i = next_item(i)
    return found


def _heads(items: Sequence[str]) -> list[str]:
    heads: list[str] = []
    for item in items:
        bold = _BOLD.match(item.strip())
        head = bold.group("head") if bold else _HEAD_END.split(item.strip(), maxsplit=1)[0]
        head = _MARKUP.sub(lambda m: m.group("label") or "", head).strip(" .;:,。；：，")
        if head and normal(head) not in {normal(h) for h in heads}:
            heads.append(head)
    return heads


def _column(lines: list[tuple[int, int, str]], at: int, column_at: int | None) -> list[str]:
    """The cells of the column the character column_at of row `at` stands in, header and rule rows left out; None
    (a sentence introduced the table) asks for the first column under the header."""
    first = last = at
    while first > 0 and TABLE_ROW.match(lines[first - 1][2]):
        first -= 1
    while last + 1 < len(lines) and TABLE_ROW.match(lines[last + 1][2]):
        last += 1
    pointed = lines[at][2]
    column = 0 if column_at is None else \
        pointed[:column_at].count("|") - (1 if pointed.lstrip().startswith("|") else 0)
    rows = [line for _, _, line in lines[first:last + 1]]
    if len(rows) > 1 and TABLE_RULE.match(rows[1]):
        rows = rows[2:]  # the header and its rule
    elif len(rows) > 1 and (at > first or column_at is None):  # no rule: the first row is taken as the header
        rows = rows[1:]
    cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows if not TABLE_RULE.match(row)]
    return _heads([row[column] for row in cells if 0 <= column < len(row) and row[column]])


def _introduces(line: str, at: int) -> bool:
    """The span's sentence is the line's last, or the line ends with a colon: what follows is its list."""
    sentences = [m.end() for m in _SENTENCE_END.finditer(line.rstrip())]
    return line.rstrip().endswith((":", "：")) or not any(at < s for s in sentences)


def _coordinated(line: str, start: int, end: int) -> list[str]:
    """The members of the coordination the span stands in: the span's own parts when it is one ("Keyring and
    Turnstile"), else the span and the series it stands in. A piece next to it as short as the span's item is a
    whole member; a longer one gives its words nearest the span ("ships the Keyring", "Watchword plugins") and ends
    the series."""
    bounds = [0, *(m.end() for m in _SENTENCE_END.finditer(line)), len(line)]
    left = max(b for b in bounds if b <= start)
    right = min((b for b in bounds if b >= end and b > left), default=len(line))
    sentence, start, end = line[left:right], start - left, end - left
    pieces, offsets = [], [0]
    for match in _SEPARATORS.finditer(sentence):
        pieces.append(sentence[offsets[-1]:match.start()])
        offsets.append(match.end())
    pieces.append(sentence[offsets[-1]:])
    inside = [i for i, o in enumerate(offsets) if o < end and o + len(pieces[i]) > start]
    if len(inside) > 1:
        return _heads([sentence[max(start, offsets[i]):min(end, offsets[i] + len(pieces[i]))] for i in inside])
    if not inside or len(pieces) == 1:
        return []
    at, asked = inside[0], sentence[start:end]
    pieces = [p.strip().strip(".;:!?。；：！？") for p in pieces]
    named = _name(asked)  # the members are names: a piece that is one is a member whatever its length
    size = len(_words(asked))
    slack = 1 if HAN.search(asked) else 0  # Chinese names differ in length by a character or so
    items, edges = [asked], {}
    for step in (-1, 1):
        i = at + step
        while 0 <= i < len(pieces) and (len(_words(pieces[i])) <= size + slack or named and _name(pieces[i])):
            items.insert(0, pieces[i]) if step < 0 else items.append(pieces[i])
            size = max(size, len(_words(pieces[i])))
            i += step
        if 0 <= i < len(pieces):  # the piece the series begins (ends) in
            edges[step] = pieces[i]
    for step, edge in edges.items():  # its words nearest the series
        items.insert(0, _cut(edge, size, True, named)) if step < 0 else items.append(_cut(edge, size, False, named))
    found = _heads([item for item in items if item])
    return found if len(found) > 1 else []


def _words(text: str) -> list[str]:
    """Words, or for a Chinese text without spaces its characters."""
    return list(text.strip()) if HAN.search(text) and " " not in text.strip() else text.split()


def _name(text: str) -> bool:
    """Every word of the text begins with a capital (a name in a cased script)."""
    words = text.split()
    return bool(words) and all(w[:1].isupper() for w in words)


def _cut(piece: str, size: int, last: bool, named: bool) -> str:
    """The words of a piece nearest the series: when the members are names, the run of capitalised words next to
    it ("opened Marlpit" -> "Marlpit", "Watchword plugins" -> "Watchword"); else as many words (Chinese:
    characters) as the span has."""
    if named:
        words = piece.split()[::-1] if last else piece.split()
        run = []
        for word in words:
            if not word[:1].isupper():
                break
            run.append(word)
        return " ".join(run[::-1] if last else run)
    cjk = bool(HAN.search(piece)) and " " not in piece
    words = _words(piece)
    return ("" if cjk else " ").join(words[-size:] if last else words[:size])


def list_groups(chosen: Candidate, candidates: Sequence[Candidate], threshold: float
             ) -> list[tuple[Candidate, list[str]]]:
    """The chosen list and, from other passages, the new items of every other list the decision would answer on its
    own (a list continued in another section, "a fourth partner joined in 2023: ..."), best first: (candidate, its
    items not given before) each."""
    groups = [(chosen, list(chosen.items))]
    seen = {normal(item) for item in chosen.items}
    for other in sorted(candidates, key=lambda c: -c.probability):
        if other is chosen or not other.items or other.probability < threshold:
            continue
        if other.passage.get("id") == chosen.passage.get("id"):
            continue
        new = [item for item in other.items if normal(item) not in seen]
        seen |= {normal(item) for item in new}
        if new:
            groups.append((other, new))
    return groups


def listed_note(groups: Sequence[tuple[Candidate, list[str]]]) -> str:
    """What the answer says of a list: how many items from how many passages, that it was cut when longer than
    MAX_ITEMS, and that a list spread wider than the context may have more."""
    found = sum(len(items) for _, items in groups)
    whole = sum(c.listed for c, _ in groups[:1]) + sum(len(items) for _, items in groups[1:])
    note = f"{whole} items found in {len(groups)} passage{'s' if len(groups) > 1 else ''}"
    if whole > found:
        note += f"; the first {found} are given"
    return note + "; items in passages the context did not hold are not listed"
