"""Index bundle mechanics with a tiny real embedder: build, open, verify, add, delete, atomicity. The retrieval
tests run on both backends (`built_any`: the bundle, and the same corpus in Milvus Lite, the real engine)."""

import json

import numpy as np
import pytest

import stores.bundle as bundle_module
from rag.retrieval.retriever import HybridRetriever, QueryError, RetrievalSettings
from stores.backend import build_index, open_index
from stores.bundle import BundleError, IndexBundle, IndexSettings

DOCS = [
    {"id": "volga", "title": "Volga", "text": "The Volga, the longest river in Europe, flows into the Caspian Sea.",
     "category": "geo.river"},
    {"id": "thames", "title": "Thames", "text": "The Thames flows through London, where Tower Bridge crosses it.",
     "category": "geo.river"},
    {"id": "curie", "title": "Marie Curie", "text": "Marie Curie founded the Radium Institute in Paris.",
     "category": "sci.person"},
]


def _write_corpus(folder, docs):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def built(tmp_path, tiny_embedder_dir):
    corpus = _write_corpus(tmp_path / "docs", DOCS)
    settings = IndexSettings(embedder=str(tiny_embedder_dir))
    bundle, report = IndexBundle.build(tmp_path / "index", [corpus], settings, progress=False)
    return bundle, report, tmp_path


@pytest.fixture(params=["bundle", "milvus"])
def built_any(request, tmp_path, tiny_embedder_dir):
    """(index, report, location) of DOCS on each backend: a bundle folder, or a Milvus Lite file."""
    corpus = _write_corpus(tmp_path / "docs", DOCS)
    location = str(tmp_path / ("index" if request.param == "bundle" else "index.db"))
    index, report = build_index(request.param, location, [corpus], IndexSettings(embedder=str(tiny_embedder_dir)),
                                progress=False)
    return index, report, (request.param, location)


def test_build_writes_every_part_and_counts(built):
    bundle, report, tmp_path = built
    assert report.documents_added == 3 and report.chunks_added == 3
    names = set(bundle.manifest["files"])
    assert {"docstore.sqlite", "vectors.npy", "dense.faiss"} <= names
    assert any(n.startswith("bm25/") for n in names)
    assert bundle.manifest["counts"] == {"documents": 3, "chunks": 3}
    leftovers = [p.name for p in tmp_path.glob(".index.*") if p.name != ".index.lock"]  # the lock file stays
    assert not leftovers, "temporary folders must be gone"


def test_search_modes_and_filters(built_any):
    bundle, _, _ = built_any
    retriever = HybridRetriever(bundle)
    top = retriever.search("Caspian Sea river", k=3, mode="bm25")
    assert top[0].chunk.doc_id == "volga"
    assert "bm25" in top[0].scores and top[0].sources == ["bm25:0"]
    hybrid = retriever.search(["Caspian Sea", "longest river Europe"], k=3)
    assert hybrid[0].chunk.doc_id == "volga"
    assert {"fused", "bm25", "dense"} <= set(hybrid[0].scores)
    assert len({h.chunk.id for h in hybrid}) == len(hybrid)
    only_people = retriever.search("river", k=3, filters={"category": {"prefix": "sci."}})
    assert [h.chunk.doc_id for h in only_people] == ["curie"]
    with pytest.raises(QueryError):
        retriever.search("   ")
    with pytest.raises(QueryError, match="limit"):
        retriever.search("x" * 100_000)


def test_incremental_add_replace_and_delete(built_any, tmp_path):
    bundle, _, where = built_any
    changed = dict(DOCS[0], text="The Volga flows into the Caspian Sea near Astrakhan.")
    new = {"id": "seine", "title": "Seine", "text": "The Seine flows through Paris."}
    report = bundle.add([_write_corpus(tmp_path / "more", [changed, DOCS[1], new])], progress=False)
    assert (report.documents_added, report.documents_replaced, report.documents_unchanged) == (1, 1, 1)
    assert bundle.manifest["counts"]["documents"] == 4
    assert HybridRetriever(bundle).search("Astrakhan", k=1, mode="bm25")[0].chunk.doc_id == "volga"
    unchanged = bundle.add([tmp_path / "more"], progress=False)
    assert unchanged.documents_unchanged == 3 and unchanged.chunks_added == 0
    deleted = bundle.delete(["seine", "nope"])
    assert deleted.documents_deleted == 1 and deleted.skipped == [("nope", "no such document in the index")]
    reopened = open_index(*where)
    assert reopened.manifest["counts"]["documents"] == 3
    assert len(reopened.bm25) == len(reopened.dense) == 3
    assert "seine" not in {hit.chunk.doc_id for hit in HybridRetriever(reopened).search("Seine Paris", k=5)}


def test_corruption_and_truncation_are_detected(built):
    bundle, _, _ = built
    vectors = bundle.path / "vectors.npy"
    data = bytearray(vectors.read_bytes())
    data[-1] ^= 0xFF
    vectors.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="vectors.npy does not match its checksum"):
        IndexBundle.open(bundle.path)
    vectors.write_bytes(bytes(data[:-10]))
    with pytest.raises(BundleError, match="truncated"):
        IndexBundle.open(bundle.path)


def test_foreign_embedder_format_and_non_bundles_are_refused(built, tmp_path):
    bundle, _, _ = built
    with pytest.raises(BundleError, match="built with embedder"):
        IndexBundle.open(bundle.path, embedder="minilm")
    manifest = json.loads((bundle.path / "manifest.json").read_text())
    manifest["format_version"] = 99
    (bundle.path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="format version 99"):
        IndexBundle.open(bundle.path)
    (tmp_path / "plain").mkdir()
    with pytest.raises(BundleError, match="not a cragraph index"):
        IndexBundle.open(tmp_path / "plain")
    with pytest.raises(BundleError, match="no index at"):
        IndexBundle.open(tmp_path / "missing")


def test_failed_update_leaves_the_old_bundle_usable(built, tmp_path, monkeypatch):
    bundle, _, _ = built

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bundle_module, "_finish", disk_full)
    with pytest.raises(BundleError, match="unchanged"):
        bundle.add(documents=[], sources=[_write_corpus(tmp_path / "x", [{"id": "n", "text": "new text"}])],
                   progress=False)
    monkeypatch.undo()
    reopened = IndexBundle.open(bundle.path)
    assert reopened.manifest["counts"]["documents"] == 3
    assert [p.name for p in bundle.path.parent.glob(".index.*")] == [".index.lock"]


def test_interrupted_swap_is_recovered(built):
    bundle, _, _ = built
    bundle.close()
    parked = bundle.path.parent / ".index.old-12345"
    bundle.path.rename(parked)
    reopened = IndexBundle.open(bundle.path)
    assert reopened.manifest["counts"]["documents"] == 3


def test_building_over_a_non_bundle_folder_is_refused(tmp_path, tiny_embedder_dir):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    corpus = _write_corpus(tmp_path / "docs", DOCS)
    with pytest.raises(BundleError, match="not a cragraph index"):
        IndexBundle.build(target, [corpus], IndexSettings(embedder=str(tiny_embedder_dir)), progress=False)
    assert (target / "notes.txt").read_text() == "keep me"


def test_vectors_stay_aligned_with_rows(built_any):
    bundle, _, _ = built_any
    rows = bundle.dense.ids
    chunks = bundle.docstore.get(rows)
    fresh = bundle.embedder.embed_passages([c.passage for c in chunks])
    assert np.allclose(bundle.dense.vectors_for(rows), fresh, atol=1e-5)


def test_dynamic_fusion_weight_follows_bm25_peakedness(built_any):
    bundle, _, _ = built_any
    retriever = HybridRetriever(bundle, RetrievalSettings(alpha_peaked=0.6, alpha_flat=0.9, peak_gap=0.15))
    assert retriever.dense_weight_for({1: 10.0, 2: 2.0}) == 0.6  # a clear lexical winner: BM25 gets more say
    assert retriever.dense_weight_for({1: 10.0, 2: 9.5}) == 0.9  # no clear winner: dense leads
    assert retriever.dense_weight_for({}) == 0.9
    fixed = HybridRetriever(bundle, RetrievalSettings(fusion="score", alpha=0.7))
    assert fixed.dense_weight_for({1: 10.0, 2: 2.0}) == 0.7
    hit = retriever.search("Caspian Sea", k=1)[0]
    assert hit.scores["alpha"] in (0.6, 0.9)
    assert 0.0 <= hit.score <= 1.0


def test_every_fusion_ranks_a_doc_found_by_both_lists_first(built_any):
    bundle, _, _ = built_any
    for fusion in ("dynamic", "score", "rrf"):
        hits = HybridRetriever(bundle, RetrievalSettings(fusion=fusion)).search("Radium Institute Paris", k=3)
        assert hits[0].chunk.doc_id == "curie", fusion
        assert set(hits[0].sources) == {"bm25:0", "dense:0"}


def test_rebuilding_a_corpus_embeds_no_sentence_twice(tmp_path, tiny_embedder_dir, monkeypatch):
    """Semantic chunking embeds every sentence of a long document; those vectors go through the embedding cache,
    so a second build of the same text (another folder, new chunk settings) asks the model for nothing new."""
    from models.embedder import Embedder

    sentences = [f"Sentence number {i} talks about river {i % 7} and its bridges in some detail."
                 for i in range(40)]
    corpus = _write_corpus(tmp_path / "docs", [{"id": "long", "title": "Long", "text": " ".join(sentences)}])
    settings = IndexSettings(embedder=str(tiny_embedder_dir))
    IndexBundle.build(tmp_path / "first", [corpus], settings, progress=False)

    embedded: list[str] = []
    original = Embedder.embed_passages

    def counting(self, texts, *args, **kwargs):
        embedded.extend(texts)
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Embedder, "embed_passages", counting)
    bundle, _ = IndexBundle.build(tmp_path / "second", [corpus], settings, progress=False)
    assert bundle.manifest["counts"]["chunks"] > 1
    assert not [text for text in embedded if "river" in text]
