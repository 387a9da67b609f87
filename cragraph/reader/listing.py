"""The items of a list a passage gives: what an enumeration question ("list all ...") is answered with.

Two shapes, in order: list lines (Markdown bullets "- x", "* x", "• x", numbered "1. x" / "1) x"), and, in a text
without any, a series after a colon ("... five departments: physics, chemistry, theory and optics." / "...:
физика, химия и оптика." / "……：物理、化学和光学。"). Prose that names things without announcing a list is not read
as one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_LIST_LINE = re.compile(r"^[ \t]*(?:[-*+•‣▪]|\d{1,3}[.)])[ \t]+(?P<item>\S[^\n]*?)[ \t]*$", re.M)
_SERIES = re.compile(r"[:：][ \t]*(?P<series>[^:：\n]+?)(?:[.;。；!?！？]|$)", re.M)
_SEPARATORS = re.compile(
    r"\s*(?:,|;|、|，|；)\s*(?:and\s+|or\s+|и\s+|или\s+)?"  # a comma, perhaps followed by "and"
    r"|\s+(?:and|or|и|или)\s+"
    r"|(?<=\S)[和及与或](?=\S)"  # Chinese conjunctions join items without spaces
)
_MAX_ITEM_CHARS = 200


def list_items(texts: Sequence[str]) -> list[tuple[str, int]]:
    """(item, index of the text it came from), in order, without repeats (compared case-insensitively)."""
    found: list[tuple[str, int]] = []
    seen: set[str] = set()
    for index, text in enumerate(texts):
        items = [m.group("item") for m in _LIST_LINE.finditer(text)] or _series(text)
        for item in items:
            item = item.strip().rstrip(".;,。；，")
            key = item.casefold()
            if item and len(item) <= _MAX_ITEM_CHARS and key not in seen:
                seen.add(key)
                found.append((item, index))
    return found


def _series(text: str) -> list[str]:
    """The longest colon-announced series of at least three items in the text."""
    best: list[str] = []
    for match in _SERIES.finditer(text):
        parts = [p for p in _SEPARATORS.split(match.group("series")) if p and p.strip()]
        if len(parts) >= 3 and len(parts) > len(best):
            best = parts
    return best
