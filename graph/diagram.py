"""The compiled graph drawn as Mermaid, and the README's drawing refreshed from it, so the picture a reader sees
is the graph that runs (a test fails when the two differ)."""

from __future__ import annotations

import re

START = "<!-- graph: drawn by `cragraph diagram --write README.md` -->"
END = "<!-- /graph -->"
_BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)


def mermaid() -> str:
    """The compiled graph's Mermaid flowchart (conditional edges dotted)."""
    from graph import graph

    return graph.get_graph().draw_mermaid().strip()


def drawn(text: str) -> str | None:
    """The Mermaid source between the markers in `text`, or None when it has no drawing."""
    found = _BLOCK.search(text)
    if found is None:
        return None
    body = found.group(0)[len(START):-len(END)].strip()
    return body.removeprefix("```mermaid").removesuffix("```").strip()


def redrawn(text: str) -> str:
    """`text` with the drawing between the markers replaced by the compiled graph's; ValueError without them."""
    if _BLOCK.search(text) is None:
        raise ValueError(f"no drawing to refresh: the text needs the markers {START} ... {END}")
    block = f"{START}\n```mermaid\n{mermaid()}\n```\n{END}"
    return _BLOCK.sub(lambda _: block, text, count=1)
