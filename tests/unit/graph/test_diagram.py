"""The README's drawing of the graph is the compiled graph (redrawn by `cragraph diagram --write README.md`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.diagram import END, START, drawn, mermaid, redrawn

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_draws_the_compiled_graph():
    assert drawn(README.read_text(encoding="utf-8")) == mermaid(), \
        "the graph changed: run `cragraph diagram --write README.md`"


def test_a_stale_drawing_is_redrawn_and_text_without_markers_is_refused():
    stale = f"# Title\n\n{START}\n```mermaid\ngraph TD;\n\ta --> b;\n```\n{END}\n\nAfter.\n"
    fresh = redrawn(stale)
    assert drawn(fresh) == mermaid() and fresh.startswith("# Title\n") and fresh.endswith("\n\nAfter.\n")
    assert "answer" in mermaid() and "grade -.-> web_search" in mermaid()
    with pytest.raises(ValueError, match="markers"):
        redrawn("# no drawing here\n")
