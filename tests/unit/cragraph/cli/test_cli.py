"""The command line end to end with a tiny real embedder: index, search, eval, and bad input."""

import json

import pytest

from cragraph.cli.main import main, parse_filters


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "rivers.jsonl").write_text("\n".join(json.dumps(d) for d in [
        {"id": "volga", "title": "Volga", "text": "The Volga flows into the Caspian Sea.", "category": "geo.river"},
        {"id": "thames", "title": "Thames", "text": "The Thames flows through London.", "category": "geo.river"},
    ]) + "\n", encoding="utf-8")
    (folder / "curie.md").write_text("# Marie Curie\n\nMarie Curie founded the Radium Institute in Paris.\n")
    (folder / "empty.txt").write_text("")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    return folder


def test_index_search_and_delete(corpus, tmp_path, tiny_embedder_dir, capsys):
    index = str(tmp_path / "index")
    assert main(["index", str(corpus), "--index", index, "--embedder", str(tiny_embedder_dir), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "3 documents added" in out and "2 skipped" in out
    assert "empty.txt" in err and "blob.txt" in err
    assert main(["search", "Caspian Sea", "--index", index, "--mode", "bm25", "-k", "2", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["chunk"]["doc_id"] == "volga" and "bm25" in hits[0]["scores"]
    assert main(["search", "flows", "--index", index, "--filter", "category=geo.*", "-k", "5", "--json"]) == 0
    assert {h["chunk"]["doc_id"] for h in json.loads(capsys.readouterr().out)} == {"volga", "thames"}
    assert main(["search", "Radium", "--index", index, "--mode", "bm25", "-k", "1"]) == 0
    assert "curie.md" in capsys.readouterr().out
    assert main(["index", "--delete", "volga", "--index", index]) == 0
    assert "1 deleted" in capsys.readouterr().out


def test_bad_input_gets_a_clear_error(corpus, tmp_path, tiny_embedder_dir, capsys):
    index = str(tmp_path / "index")
    assert main(["index", str(tmp_path / "missing"), "--index", index]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["search", "anything", "--index", str(tmp_path / "nowhere")]) == 1
    assert "no index at" in capsys.readouterr().err
    assert main(["search", "anything", "--index", str(corpus)]) == 1
    assert "not a cragraph index" in capsys.readouterr().err
    assert main(["index", str(corpus), "--index", index, "--embedder", str(tiny_embedder_dir), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "  ", "--index", index]) == 1
    assert "empty" in capsys.readouterr().err
    assert main(["search", "q" * 100_000, "--index", index]) == 1
    assert "limit" in capsys.readouterr().err
    unreadable = tmp_path / "unreadable"
    unreadable.mkdir()
    (unreadable / "x.bin").write_bytes(b"\x00\x00")
    assert main(["index", str(unreadable), "--index", index, "--rebuild", "--quiet"]) == 1
    assert "no readable documents" in capsys.readouterr().err
    assert main(["search", "Volga", "--index", index, "-k", "1"]) == 0, "the old index must stay usable"


def test_eval_retrieval_prints_the_table_and_writes_json(tmp_path, tiny_embedder_dir, capsys):
    data = tmp_path / "set"
    data.mkdir()
    (data / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in [
        {"id": "p1", "title": "Volga", "text": "The Volga flows into the Caspian Sea."},
        {"id": "p2", "title": "Thames", "text": "The Thames flows through London."},
        {"id": "p3", "title": "Curie", "text": "Marie Curie founded the Radium Institute."},
    ]) + "\n")
    (data / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in [
        {"id": "q1", "question": "Which river flows into the Caspian Sea?", "answers": ["Volga"],
         "supporting_ids": ["p1"]},
        {"id": "q2", "question": "Who founded the Radium Institute?", "answers": ["Curie"],
         "supporting_ids": ["p3"]},
    ]) + "\n")
    out = tmp_path / "report.json"
    assert main(["eval", "retrieval", "--dataset", str(data), "--modes", "bm25,dense,hybrid,hybrid-rrf", "--embedder",
                 str(tiny_embedder_dir), "--out", str(out), "--index-root", str(tmp_path / "indexes")]) == 0
    printed = capsys.readouterr().out
    assert "| mode | R@1 | R@2 | R@5 | R@10 | AllGold@5 | MRR | nDCG@10 | p50_ms | p95_ms |" in printed
    assert "| bm25 | 1.000 |" in printed
    report = json.loads(out.read_text())
    assert set(report["modes"]) == {"bm25", "dense", "hybrid", "hybrid-rrf"}
    assert "| hybrid-rrf |" in printed
    assert report["modes"]["bm25"]["metrics"]["R@1"] == 1.0
    assert report["modes"]["bm25"]["metrics"]["nDCG@10"] == 1.0

    ablation = tmp_path / "ablation.json"
    assert main(["eval", "retrieval", "--dataset", str(data), "--ablate", "multi_query,prf", "--embedder",
                 str(tiny_embedder_dir), "--out", str(ablation), "--index-root", str(tmp_path / "indexes")]) == 0
    printed = capsys.readouterr().out
    rows = json.loads(ablation.read_text())["datasets"]["set"]
    assert set(rows) == {"defaults", "none", "+multi_query", "+prf"}
    assert "| +multi_query |" in printed and "nDCG@10 | p50 ms | ran on" in printed


def test_parse_filters():
    assert parse_filters(["category=cs.*", "language=en"]) == {"category": {"prefix": "cs."}, "language": "en"}
    with pytest.raises(ValueError):
        parse_filters(["oops"])


def test_eval_retrieval_refuses_an_unknown_mode(tmp_path, capsys):
    from cragraph.bench.retrieval import retriever_modes
    from cragraph.retrieval.retriever import HybridRetriever

    with pytest.raises(ValueError, match="unknown mode 'hybrid-magic'"):
        retriever_modes(HybridRetriever(bundle=None), ["hybrid-magic"])
