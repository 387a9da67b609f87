"""A section read back from its chunks: the whitespace between chunks is put back so that a list whose items wrap
over several lines stays one list."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nodes.answer import _between, joined
from rag.answering.lists import list_at
from stores.chunking import chunk_document
from stores.loaders import load_documents

REPORT = """# Service report

## Laboratories

The Service operates three laboratories:

1. **Dunmere Processing Laboratory** — separates donated blood into parts.
   Its head is Dr Imran Voss.
2. **Morrowick Screening Laboratory** — tests every donation before release.
   It is led by an acting head while its head is on leave.
3. **Penhallow Reference Laboratory** — carries out antibody investigations.

The tissue bank is not counted among the laboratories.
"""


def test_a_wrapped_numbered_list_read_back_from_its_chunks_keeps_every_item(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text(REPORT, encoding="utf-8")
    (doc,) = load_documents([tmp_path / "report.md"]).documents

    def embed(sentences: list[str]) -> np.ndarray:  # every sentence its own topic: a cut at every sentence
        return np.eye(len(sentences), dtype=np.float32)

    chunks = chunk_document(doc, embed, min_chars=0, max_chars=100, whole_doc_chars=0)
    gaps = [int(b.metadata["start"]) - int(a.metadata["end"]) for a, b in zip(chunks, chunks[1:], strict=False)]
    assert any(gap > 2 for gap in gaps), "a cut inside a wrapped item: a line break and its indentation"
    text = joined(chunks)  # what the answer node's section reader reads
    start = text.index("Dunmere")
    items, form = list_at(text, start, start + len("Dunmere Processing Laboratory"))
    assert form == "block"
    assert items == [
        "Dunmere Processing Laboratory", "Morrowick Screening Laboratory", "Penhallow Reference Laboratory"]


def test_the_whitespace_between_chunks() -> None:
    assert [_between(gap) for gap in (0, 1, 2, 4)] == ["", "\n", "\n\n", "\n   "]
