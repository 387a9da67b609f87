"""Markdown tables in text: their rows, cells and header.

Why here: the chunker cuts a long table between rows, and a chunk that starts inside one keeps its header row
in its metadata (a row of cells means little without the names of its columns); the reader writes rows out
with those names (rag/reader/table_rows.py), and list answers read a table's column (rag/answering/lists.py).
"""

from __future__ import annotations

import re

TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$|^[^|]+\|[^|]*\|")  # "| a | b |", or "a | b | c" without outer pipes
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")


def cells(line: str, offset: int = 0) -> list[tuple[int, int]]:
    """(start, end) of each cell of a table row that starts at `offset` of its text, trimmed of spaces."""
    edges = ([] if line.lstrip().startswith("|") else [-1]) + [i for i, char in enumerate(line) if char == "|"]
    if not line.rstrip().endswith("|"):
        edges.append(len(line))
    found = []
    for left, right in zip(edges, edges[1:], strict=False):
        start, end = left + 1, right
        while start < end and line[start].isspace():
            start += 1
        while end > start and line[end - 1].isspace():
            end -= 1
        found.append((offset + start, offset + end))
    return found


def header_above(text: str, start: int) -> str:
    """The header row of the table whose body row begins at `start`, when it lies before `start` (the chunk
    holds rows of a table whose header an earlier chunk holds); "" otherwise."""
    line_end = text.find("\n", start)
    first = text[start : len(text) if line_end < 0 else line_end]
    if not TABLE_ROW.match(first) or TABLE_RULE.match(first):
        return ""
    end = start - 1  # walk up the rows above
    while end > 0:
        line_start = text.rfind("\n", 0, end) + 1
        line = text[line_start:end]
        if TABLE_RULE.match(line):
            header_start = text.rfind("\n", 0, max(line_start - 1, 0)) + 1
            header = text[header_start : max(line_start - 1, header_start)]
            return header if TABLE_ROW.match(header) else ""
        if not TABLE_ROW.match(line):
            return ""
        end = line_start - 1
    return ""
