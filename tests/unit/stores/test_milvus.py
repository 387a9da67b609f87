"""The Milvus backend on the real Milvus Lite engine (no mock): filters as Milvus expressions agree with the
SQLite docstore, the entity field, BM25 over our tokenizer's terms, the graph's retrieve node on Milvus, the CLI,
and bad input (an unreachable server, a foreign embedder or dimension, a bad backend name or URI). The retrieval
tests the bundle passes run on Milvus too: tests/unit/stores/test_bundle.py (`built_any`)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from cragraph.cli.main import main
from rag.context import Context
from rag.retrieval.retriever import HybridRetriever
from stores.backend import check_backend, open_index
from stores.bundle import IndexSettings
from stores.docstore import DocStore, FilterError
from stores.milvus.connection import MilvusError, check_uri, connect
from stores.milvus.filters import filter_expression
from stores.milvus.index import MilvusIndex
from stores.milvus.schema import chunk_record, create_collections, read_manifest, write_manifest
from stores.milvus.views import Collection, MilvusDocStore
from stores.ner import RULES_ENV
from stores.types import Chunk
from tests.fixtures.graph import DOCS, IN_CORPUS, cites_the_volga, context, use_keyword_evaluator

CHUNKS = [
    Chunk("a#0", "a", "alpha", "A", {"language": "en", "year": 2020, "category": "cs.AI", "acl": ["hr"]}),
    Chunk("b#0", "b", "бета", "B", {"language": "ru", "year": 2021, "category": "cs_x", "draft": True}),
    Chunk("c#0", "c", "gamma", "C", {"language": "es", "date": "2024-03-01", "category": "math"}),
    Chunk("d#0", "d", "delta", "D", {"language": "en", "year": 2019.5, "page": 12}),
]
FILTERS = [
    {"language": "en"},
    {"language": ["ru", "es"]},
    {"language": []},
    {"language": [{"prefix": "e"}, "ru"]},
    {"category": {"prefix": "cs."}},  # "cs_x" must not match: no LIKE wildcard leaks through
    {"category": {"prefix": "cs"}},
    {"year": {"gte": 2020}},
    {"year": {"gt": 2019, "lt": 2021}},
    {"year": {"gte": "2020"}},  # a string bound never matches a number
    {"date": {"gte": "2024-01-01", "lte": "2024-12-31"}},
    {"draft": True},
    {"language": None},
    {"missing": "x"},
    {"doc_id": "b"},
    {"id": ["a#0", "d#0"]},
    {"title": {"prefix": "del"}},
    {"language": "en", "year": {"lt": 2020}},
    {"language": 'q"uote'},
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The same chunks in a SQLite docstore and in a Milvus Lite collection."""
    folder = tmp_path_factory.mktemp("milvus-filters")
    sqlite = DocStore(folder / "docstore.sqlite")
    sqlite.add([1, 2, 3, 4], CHUNKS)
    client = connect(str(folder / "filters.db"))
    create_collections(client, "cragraph", 4, 1.2, 0.75)
    client.insert("cragraph", [chunk_record(row, chunk, [1.0, 0.0, 0.0, 0.0], [], "cragraph")
                               for row, chunk in enumerate(CHUNKS, start=1)])
    yield sqlite, MilvusDocStore(Collection(client, "cragraph", lambda: len(CHUNKS) + 1))
    sqlite.close()


@pytest.mark.parametrize("filters", FILTERS, ids=[json.dumps(f, ensure_ascii=False) for f in FILTERS])
def test_filters_as_milvus_expressions_match_the_docstore(stores, filters):
    sqlite, milvus = stores
    assert milvus.filter_rows(filters).tolist() == sqlite.filter_rows(filters).tolist()


def test_filter_expressions_read_as_milvus_boolean_expressions_and_refuse_bad_shapes():
    assert filter_expression({"language": "en"}) == 'metadata["language"] == "en"'
    assert filter_expression({"doc_id": ["a", "b"]}) == 'doc_id in ["a", "b"]'
    assert filter_expression({"doc_id": ["a", 1]}) == '(doc_id == "a" or doc_id == "1")'
    assert filter_expression({"year": {"gte": 2020}}) == '(metadata["year"] >= 2020)'
    with pytest.raises(FilterError, match="unknown operator"):
        filter_expression({"language": {"regex": ".*"}})


def test_docstore_face_reads_chunks_metadata_and_hashes(stores):
    sqlite, milvus = stores
    assert [c.id for c in milvus.get([3, 1])] == ["c#0", "a#0"]
    assert milvus.get([2])[0] == sqlite.get([2])[0]
    assert milvus.rows_of(["d#0", "nope"]) == {"d#0": 4}
    assert milvus.rows_of([f"x{i}" for i in range(9_000)] + ["a#0"]) == {"a#0": 1}  # batched `id in [...]`
    assert milvus.metadata_values("language") == sqlite.metadata_values("language")
    assert milvus.metadata_values("acl") == sqlite.metadata_values("acl")
    assert [row for row, _ in milvus.iter_rows()] == [1, 2, 3, 4]
    assert milvus.document_ids() == {"a", "b", "c", "d"}
    assert len(milvus) == 4


def _corpus(folder: Path, docs) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n",
                                         encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, tiny_embedder_dir):
    """DOCS (en + ru) in Milvus Lite, with the entity field (rule-based NER, as the unit conftest sets per test)."""
    folder = tmp_path_factory.mktemp("milvus-tiny")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RULES_ENV, "rules")
        index, _ = MilvusIndex.build(str(folder / "tiny.db"), [_corpus(folder / "docs", DOCS)],
                                     IndexSettings(embedder=str(tiny_embedder_dir)), progress=False)
    return index


def test_entity_field_is_stored_per_chunk_and_feeds_the_entity_index_and_graph(tiny):
    rows = tiny.docstore.rows_of([f"{doc['id']}#0" for doc in DOCS])
    entities = dict(zip(rows.values(), tiny.docstore.entities_of(list(rows.values())), strict=True))
    assert "kazan kremlin" in entities[rows["kazan#0"]] and "caspian sea" in entities[rows["volga#0"]]
    found, _ = tiny.entities.search(["Kazan"], pool=5)
    assert rows["kazan#0"] in found.tolist()
    assert tiny.graph is not None and len(tiny.graph.rows) == len(DOCS)
    assert tiny.manifest["entities"]["chunks_with_entities"] > 0


def test_bm25_reads_our_tokenizers_terms_so_russian_inflections_match(tiny):
    """"Нобелевской премии" shares no surface word with "Нобелевскую премию"; the stems match."""
    rows, scores = tiny.bm25.search("Нобелевской премии", 3)
    assert tiny.docstore.get(rows[:1].tolist())[0].doc_id == "landau"
    assert scores[0] > 0
    assert tiny.bm25.scores_for("Нобелевской премии", [*rows.tolist(), 10_000]).tolist()[-1] == 0.0
    assert tiny.bm25.vocabulary()["нобелевск"] == 1  # term statistics for the query analysis, from the lexicon


def test_the_graph_answers_from_a_milvus_index_named_by_the_context(tiny, tmp_path, monkeypatch):
    from graph import graph

    use_keyword_evaluator(monkeypatch)
    ctx = context(tmp_path / "no-bundle-here", index_backend="milvus", index_uri=tiny.uri)
    result = graph.invoke({"question": IN_CORPUS}, context=ctx)
    assert result["verdict"] == "correct"
    assert cites_the_volga(result["citations"]), result
    assert any("Caspian" in e["sentence"] for e in result["evidence"])


def test_cli_index_search_and_delete_on_milvus_lite(tmp_path, tiny_embedder_dir, capsys):
    corpus = _corpus(tmp_path / "docs", DOCS)
    uri = str(tmp_path / "cli.db")
    assert main(["index", str(corpus), "--backend", "milvus", "--uri", uri, "--embedder", str(tiny_embedder_dir),
                 "--quiet"]) == 0
    assert "5 documents added" in capsys.readouterr().out
    assert main(["search", "Caspian Sea", "--uri", uri, "--mode", "bm25", "-k", "2", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["chunk"]["doc_id"] == "volga"
    assert main(["index", "--delete", "volga", "--uri", uri]) == 0
    assert "1 deleted" in capsys.readouterr().out
    assert open_index("milvus", uri).manifest["counts"] == {"documents": 4, "chunks": 4}
    assert not (tmp_path / ".cragraph").exists()  # no bundle folder or lock file for a Milvus index


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_server_is_a_clear_error_and_nothing_is_written(tmp_path, tiny_embedder_dir, monkeypatch,
                                                                        capsys):
    corpus = _corpus(tmp_path / "docs", DOCS)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    uri = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(MilvusError, match="cannot reach Milvus at http://127.0.0.1"):
        MilvusIndex.build(uri, [corpus], IndexSettings(embedder=str(tiny_embedder_dir)), progress=False)
    assert main(["index", str(corpus), "--backend", "milvus", "--uri", uri, "--quiet"]) == 1
    assert "cannot reach Milvus" in capsys.readouterr().err
    assert main(["search", "river", "--uri", uri]) == 1
    assert "nothing was written" in capsys.readouterr().err
    assert list(work.iterdir()) == []


def test_a_foreign_embedder_or_dimension_or_collection_is_refused(tiny, tmp_path):
    with pytest.raises(MilvusError, match="built with embedder"):
        MilvusIndex.open(tiny.uri, embedder="minilm")
    manifest = read_manifest(tiny.client, "cragraph")
    assert manifest is not None
    try:
        write_manifest(tiny.client, "cragraph", {**manifest, "embedder": {**manifest["embedder"], "dim": 384}})
        with pytest.raises(MilvusError, match="32-dimensional vectors"):
            MilvusIndex.open(tiny.uri)
    finally:
        write_manifest(tiny.client, "cragraph", manifest)
    client = connect(str(tmp_path / "foreign.db"))
    client.create_collection("cragraph", dimension=8)  # someone else's collection of the same name
    with pytest.raises(MilvusError, match="not a cragraph index"):
        MilvusIndex.open(str(tmp_path / "foreign.db"))
    with pytest.raises(MilvusError, match="no index at"):
        MilvusIndex.open(str(tmp_path / "empty.db"))


def test_bad_backend_names_and_uris_are_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown index backend 'elastic'; expected one of bundle, milvus"):
        check_backend("elastic")
    with pytest.raises(ValueError, match="index_backend must be one of 'bundle', 'milvus'"):
        Context(index_backend="elastic")  # type: ignore[arg-type]
    with pytest.raises(SystemExit):
        main(["search", "river", "--backend", "elastic"])
    assert "invalid choice: 'elastic'" in capsys.readouterr().err
    assert main(["search", "river", "--backend", "milvus"]) == 1
    assert "--backend milvus needs --uri" in capsys.readouterr().err
    with pytest.raises(MilvusError, match="neither a Milvus Lite file"):
        check_uri(str(tmp_path / "folder"))
    with pytest.raises(MilvusError, match="its folder does not exist"):
        connect(str(tmp_path / "missing" / "x.db"))


def test_dense_face_returns_the_stored_vectors(tiny):
    rows = tiny.dense.ids
    chunks = tiny.docstore.get(rows.tolist())
    fresh = tiny.embedder.embed_passages([c.passage for c in chunks])
    assert np.allclose(tiny.dense.vectors_for(rows.tolist()), fresh, atol=1e-5)
    found, scores = tiny.dense.search(fresh[0], 2)
    assert found[0] == rows[0] and scores[0] == pytest.approx(1.0, abs=1e-4)
    assert HybridRetriever(tiny).dense_search(fresh[0], 1)[0].chunk.id == chunks[0].id


def test_a_released_collection_is_loaded_again_on_open(tiny):
    """Milvus keeps collections released after a restart (Milvus Lite: in every new process) until loaded."""
    tiny.client.release_collection("cragraph")
    tiny.client.release_collection("cragraph_manifest")
    reopened = MilvusIndex.open(tiny.uri)
    assert HybridRetriever(reopened).search("Caspian Sea", k=1, mode="bm25")[0].chunk.doc_id == "volga"


def test_a_file_indexed_again_by_its_own_path_replaces_itself(tmp_path, tiny_embedder_dir):
    """Ids are relative to the folders an index was built from (the manifest's roots), as in the bundle."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "river.md").write_text("# Volga\n\nThe Volga flows into the Caspian Sea.\n", encoding="utf-8")
    index, _ = MilvusIndex.build(str(tmp_path / "notes.db"), [folder], IndexSettings(embedder=str(tiny_embedder_dir)),
                                 progress=False)
    (folder / "river.md").write_text("# Volga\n\nThe Volga flows past Astrakhan.\n", encoding="utf-8")
    report = index.add([folder / "river.md"], progress=False)
    assert (report.documents_replaced, report.documents_added) == (1, 0)
    assert index.docstore.document_ids() == {"river.md"}
    assert HybridRetriever(index).search("Astrakhan", k=1, mode="bm25")[0].chunk.doc_id == "river.md"


def test_ask_and_serve_options_name_the_milvus_index_for_the_graph(tmp_path):
    from cragraph.cli.agent import build_context, server_env
    from cragraph.cli.main import _parser

    ctx = build_context(_parser().parse_args(["ask", "q", "--uri", "notes.db"]))
    assert (ctx.index_backend, ctx.index_uri) == ("milvus", "notes.db")
    assert build_context(_parser().parse_args(["ask", "q"])).index_backend == "bundle"
    env = server_env(None, str(tmp_path / "notes.db"))
    assert env["CRAGRAPH_INDEX_BACKEND"] == "milvus" and env["CRAGRAPH_INDEX_URI"] == str(tmp_path / "notes.db")


def test_a_chinese_query_searches_the_terms_field_in_both_scripts():
    from stores.milvus.schema import bm25_terms, query_bm25_terms

    assert query_bm25_terms("鋼鐵隊", "cragraph").split() == ["鋼鐵", "鐵隊", "钢铁", "铁队"]
    assert bm25_terms("鋼鐵隊", "cragraph").split() == ["鋼鐵", "鐵隊"]  # passages keep their own script
    assert query_bm25_terms("鋼鐵隊", "milvus") == "鋼鐵隊"  # Milvus' analyzer reads the raw text

    class Recording:
        """Stands in for the collection only to see what the search sends."""

        sent: list[str] = []

        def search(self, texts, field, metric, k, allowed):
            self.sent.extend(texts)
            return np.zeros(0, dtype=np.int64), np.zeros(0)

    from stores.milvus.views import MilvusBM25

    collection = Recording()
    MilvusBM25(collection, "cragraph", 1.2, 0.75).search("鋼鐵隊", 3)
    assert collection.sent == ["鋼鐵 鐵隊 钢铁 铁队"]
