"""Skeleton indexing: the central chunks get NER, the rest keyword links to the names found."""

import numpy as np
import pytest

from cragraph.cli.main import main
from stores.skeleton import central_positions, keyword_entities, skeleton_entities
from stores.types import Chunk


def test_keyword_links_are_whole_words_longest_first_and_han_by_substring():
    vocabulary = {"marie curie", "curie", "paris", "radium institute", "居里夫人"}
    assert keyword_entities("Marie Curie founded the Radium Institute in Paris.", vocabulary) == [
        "marie curie", "radium institute", "paris"]
    assert keyword_entities("The curies of Parisians", vocabulary) == []
    assert keyword_entities("居里夫人在巴黎工作。", vocabulary) == ["居里夫人"]


def test_central_positions_prefer_the_hub_of_the_neighbour_graph():
    rng = np.random.default_rng(0)
    hub = rng.normal(size=16)
    vectors = [hub + rng.normal(scale=0.3, size=16) for _ in range(6)] + [rng.normal(size=16) for _ in range(6)]
    vectors = np.asarray(vectors, dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    central = central_positions(vectors, 0.25)
    assert len(central) == 3 and set(central.tolist()) <= set(range(6))


def test_skeleton_entities_run_ner_on_the_share_and_link_the_rest(monkeypatch):
    calls = []

    def fake_ner(chunks, progress=False):
        calls.append([c.id for c in chunks])
        return [["Ada Lovelace", "London"] for _ in chunks]

    monkeypatch.setattr("stores.skeleton.chunk_entities", fake_ner)
    chunks = [Chunk(id=f"c{i}", doc_id=f"d{i}", text=text) for i, text in enumerate(
        ["Ada Lovelace lived in London.", "Ada Lovelace wrote notes.", "Kyoto is old.", "London is big."])]
    vectors = np.eye(4, dtype=np.float32)
    found = skeleton_entities(chunks, vectors, 0.25, known=["Kyoto"])
    assert len(calls) == 1 and len(calls[0]) == 1, "NER ran on one chunk of four"
    linked = {c.id: names for c, names in zip(chunks, found, strict=True) if c.id not in calls[0]}
    assert linked == {cid: expected for cid, expected in {
        "c0": ["ada lovelace", "london"], "c1": ["ada lovelace"], "c2": ["kyoto"], "c3": ["london"]}.items()
        if cid not in calls[0]}
    assert skeleton_entities(chunks, vectors, 1.0) == [["Ada Lovelace", "London"]] * 4
    with pytest.raises(ValueError, match="ner_share"):
        skeleton_entities(chunks, vectors, 0.0)


def test_the_cli_refuses_a_share_outside_zero_one(tmp_path, capsys):
    assert main(["index", str(tmp_path), "--index", str(tmp_path / "x"), "--ner-share", "0"]) == 1
    assert "--ner-share must be in (0, 1]" in capsys.readouterr().err


def test_cli_index_with_no_paths_brings_an_older_bundle_up_to_date(tmp_path, tiny_embedder_dir, capsys):
    import json

    from stores.bundle import IndexBundle

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Ada Lovelace\n\nAda Lovelace wrote about the Analytical Engine.\n")
    index = tmp_path / "index"
    assert main(["index", str(docs), "--index", str(index), "--embedder", str(tiny_embedder_dir), "--quiet"]) == 0
    manifest = json.loads((index / "manifest.json").read_text())
    del manifest["graph"], manifest["files"]["graph/graph.npz"]
    (index / "manifest.json").write_text(json.dumps(manifest))
    assert IndexBundle.open(index).graph is None
    assert main(["index", "--index", str(index), "--quiet"]) == 0
    assert "entity-passage graph built" in capsys.readouterr().out
    assert IndexBundle.open(index).graph is not None
    assert main(["index", "--index", str(tmp_path / "missing")]) == 1
    assert "no index at" in capsys.readouterr().err
