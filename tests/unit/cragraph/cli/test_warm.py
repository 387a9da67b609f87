"""The warm-up of a cold ask (cragraph/cli/warm.py) opens what the run then asks for, in the run's own caches, and
is silent about what it cannot open."""

from __future__ import annotations

from pathlib import Path

import pytest

from cragraph.cli import warm
from tests.fixtures.graph import build_tiny_index


def test_the_warm_up_fills_the_caches_the_run_reads(tmp_path: Path, tiny_embedder_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from models import embedder
    from models.embedder import load_embedder
    from rag.reader import cache
    from rag.reader.cache import load_reader
    from stores import text
    from stores.bundle import embedder_of

    index = build_tiny_index(tmp_path, tiny_embedder_dir)
    monkeypatch.setattr(embedder, "_cache", {})  # empty caches for this test; the others keep theirs
    monkeypatch.setattr(cache, "_readers", {})
    text._read_identifier.cache_clear()
    warm.warm_in_background(index).join(timeout=600)
    warmed = list(embedder._cache.values())
    assert len(warmed) == 1 and len(cache._readers) == 1 and text._read_identifier.cache_info().currsize == 1
    assert load_embedder(embedder_of(index)) is warmed[0]  # what the run asks for is what was warmed
    assert load_reader() is next(iter(cache._readers.values()))


def test_a_missing_index_warms_the_rest_and_raises_nothing(tmp_path: Path) -> None:
    warm._warm(tmp_path / "no-index")  # the run reports the missing index itself
