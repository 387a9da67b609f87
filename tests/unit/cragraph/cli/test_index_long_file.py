"""A very long file is named before indexing starts, with its size and chunk count, even under --quiet."""

from __future__ import annotations

from cragraph.cli.main import main
from stores import ingest


def test_a_very_long_file_is_named_before_indexing(tmp_path, tiny_embedder_dir, caplog, monkeypatch) -> None:
    """`cragraph index --quiet` on a file over the long-document size warns up front: file, size, chunks."""
    monkeypatch.setattr(ingest, "LONG_DOCUMENT_CHARS", 20_000)  # the rule, at a size this test can index
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "one_line.txt").write_text(" ".join(f"The river {i} flows under bridge {i}." for i in range(800)))
    (corpus / "short.txt").write_text("A short note about a bridge.")
    with caplog.at_level("WARNING", logger="cragraph.ingest"):
        assert main(["index", str(corpus), "--index", str(tmp_path / "index"), "--embedder", str(tiny_embedder_dir),
                     "--quiet"]) == 0
    warned = [r.getMessage() for r in caplog.records if "very long document" in r.getMessage()]
    assert len(warned) == 1
    size = len((corpus / "one_line.txt").read_text())
    assert "one_line.txt" in warned[0] and f"{size:,} characters" in warned[0]
    assert f"at least {size // 500:,} chunks" in warned[0] and "--quiet" in warned[0]
