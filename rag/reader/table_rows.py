"""Tables read as sentences: each body row of a Markdown table as "header: cell, header: cell." on its own line.

Why: the reader was trained on prose. Given "| № 6 «Речная» | Заречный | 95 | 2021 |" far below a header row
that names the columns, it points at the header ("Год подключения") or at a neighbouring cell; the sentence
window may not even keep the header. A row written out with its column names holds the question's words and
the value side by side, as a sentence of prose would. The text read is rebuilt from pieces of the original, so
every span the reader points at maps back to the cell (or header) it was copied from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stores.markdown_tables import TABLE_ROW, TABLE_RULE, cells
from stores.tokenize import tokenize


@dataclass(frozen=True)
class Piece:
    """A stretch of the text as read copied from the original: read[start:end] == original[source:source+len]."""

    start: int
    end: int
    source: int
    header: bool = False  # a column name repeated before a cell


def rows_as_sentences(text: str, header: str = "", asked: frozenset[str] = frozenset()
                      ) -> tuple[str, tuple[Piece, ...]]:
    """The text with every table that has a header and a rule row written row by row as sentences, and the
    pieces it is made of; ("", ()) when the text holds no such table (it is read as it is). `header`: the header
    row of a table the text starts inside (its header row is not in the text; rag's passages carry it).
    `asked`: the question's terms; when they name some rows of a table (named_rows), only those are written."""
    lines, position = [], 0
    for raw in text.split("\n"):
        lines.append((position, raw))
        position += len(raw) + 1
    parts: list[str] = []
    pieces: list[Piece] = []
    length = copied = 0  # length of the text built so far; how much of the original it has taken

    def add(piece: str, source: int = -1, is_header: bool = False) -> None:
        nonlocal length
        if source >= 0 and piece:
            pieces.append(Piece(length, length + len(piece), source, is_header))
        parts.append(piece)
        length += len(piece)

    first = next((i for i, (_, line) in enumerate(lines) if line.strip()), len(lines))
    at = 0
    while at < len(lines):
        body = _body_start(lines, at)
        if at == first and header and TABLE_ROW.match(lines[at][1]) and body != at + 2:
            names = [(header[s:e], -1) for s, e in cells(header)]  # not in the text: read, never cut back
            body = at
        elif body > at:
            names = [(text[s:e], s) for s, e in cells(lines[at][1], lines[at][0])]
        else:
            at += 1
            continue
        end = body
        while end < len(lines) and TABLE_ROW.match(lines[end][1]) and not TABLE_RULE.match(lines[end][1]):
            end += 1
        if end > body:
            add(text[copied : lines[at][0]], copied)
            rows = [cells(row, offset) for offset, row in lines[body:end]]
            for row in named_rows(text, rows, asked) or rows:
                _row(text, names, row, add)
            copied = lines[end - 1][0] + len(lines[end - 1][1])
        at = max(end, at + 1)
    if not pieces:
        return "", ()
    add(text[copied:], copied)
    return "".join(parts), tuple(pieces)


def named_rows(text: str, rows: list[list[tuple[int, int]]], asked: frozenset[str]
               ) -> list[list[tuple[int, int]]]:
    """The rows whose first cell holds a question term that no other row's first cell holds ("«Северная»" of
    "Котельная № 5 «Северная»"): the rows the question is about. Side by side, rows that differ only in their
    subject are told apart by the reader less surely than by this, and the rows it does not name are not read."""
    keys = [set(tokenize(text[row[0][0] : row[0][1]])) if row else set() for row in rows]
    named = []
    for i, key in enumerate(keys):
        own = key - set().union(*(other for j, other in enumerate(keys) if j != i))
        if own & asked:
            named.append(rows[i])
    return named


def _body_start(lines: list[tuple[int, str]], at: int) -> int:
    """Where the body of a table whose header row is line `at` begins, or -1: after the rule row under the
    header, or, in a plain-text table without a rule, after the first of three or more rows that open a run of
    table rows and have as many cells each (three at least), as list answers read such a table."""
    def row(i: int) -> bool:
        return 0 <= i < len(lines) and bool(TABLE_ROW.match(lines[i][1])) and not TABLE_RULE.match(lines[i][1])

    if not row(at):
        return -1
    if at + 1 < len(lines) and TABLE_RULE.match(lines[at + 1][1]):
        return at + 2
    if row(at - 1) or not (row(at + 1) and row(at + 2)):
        return -1
    counts = {len(cells(lines[i][1])) for i in (at, at + 1, at + 2)}
    return at + 1 if len(counts) == 1 and counts.pop() >= 3 else -1


def _row(text: str, names: list[tuple[str, int]], row: list[tuple[int, int]], add: Callable[..., None]) -> None:
    """One row as "name: value, name: value." (a cell without a column name as it stands; empty cells left out)."""
    written = [(i, cell) for i, cell in enumerate(row) if cell[1] > cell[0]]
    for n, (i, (start, end)) in enumerate(written):
        if n:
            add(", ")
        if i < len(names) and names[i][0]:
            add(names[i][0], names[i][1], is_header=True)
            add(": ")
        add(text[start:end], start)
    add(".\n" if written else "\n")


def to_source(pieces: tuple[Piece, ...], start: int, end: int, whole: bool = False) -> tuple[int, int] | None:
    """[start, end) of the text as read mapped to the original: the last cell it covers (a span over "name: value"
    is the value; one over several cells of a row, which the original holds apart, its last), else the header it
    lies in; None when it covers no copied character. Outside tables the text is one piece, mapped as it is.
    `whole`: from its first cell to its last (a sentence: the row as the original writes it)."""
    covered = [p for p in pieces if p.start < end and start < p.end]
    values = [p for p in covered if not p.header] or covered
    if not values:
        return None
    first, last = (values[0] if whole else values[-1]), values[-1]
    source_start = first.source + max(start, first.start) - first.start
    source_end = last.source + min(end, last.end) - last.start
    return (source_start, source_end) if source_end > source_start else None
