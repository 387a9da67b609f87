"""The entity field in the bundle: kept in step by build/add/delete, old bundles open and backfill, range filters."""

import json
import sqlite3

import pytest

import stores.bundle as bundle_module
import stores.ingest as ingest_module
from stores.bundle import IndexBundle, IndexSettings
from stores.docstore import DocStore
from stores.ner import RULES_ENV
from stores.types import Chunk

DOCS = [
    {"id": "volga", "title": "Volga", "text": "The Volga flows past Nizhny Novgorod into the Caspian Sea."},
    {"id": "curie", "title": "Curie", "text": "Marie Curie founded the Radium Institute in Paris."},
    {"id": "thames", "title": "Thames", "text": "The Thames flows through London under Tower Bridge."},
]


@pytest.fixture(autouse=True)
def rules_ner(monkeypatch):
    """Rule NER: fast and deterministic; the statistical backends have their own integration test."""
    monkeypatch.setenv(RULES_ENV, "rules")


def _corpus(folder, docs):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    return folder


def _doc_of_rows(bundle, rows):
    return [c.doc_id for c in bundle.docstore.get(rows.tolist())]


def _assert_in_step(bundle):
    """Docstore entities, the entity field and the chunks cover the same rows with the same entities."""
    rows = [row for row, _ in bundle.docstore.iter_rows()]
    assert len(bundle.entities) == len(rows)
    assert bundle.entities.entities_of(rows) == bundle.docstore.entities_of(rows)


@pytest.fixture
def built(tmp_path, tiny_embedder_dir):
    settings = IndexSettings(embedder=str(tiny_embedder_dir))
    bundle, _ = IndexBundle.build(tmp_path / "index", [_corpus(tmp_path / "docs", DOCS)], settings, progress=False)
    return bundle


def test_build_stores_entities_in_docstore_field_and_manifest(built):
    assert built.has_entities
    assert {"entities/entities.json", "entities/entity_rows.npz"} <= set(built.manifest["files"])
    assert built.manifest["entities"]["chunks_with_entities"] == 3
    assert built.manifest["entities"]["ner"] == {"en": "rules"}
    _assert_in_step(built)
    rows, scores = built.entities.search(["Marie Curie", "paris"], pool=5)
    assert _doc_of_rows(built, rows) == ["curie"] and scores[0] > 0
    assert _doc_of_rows(built, built.entities.search(["nizhny novgorod"], pool=5)[0]) == ["volga"]


def test_add_replace_and_delete_keep_the_field_in_step(built, tmp_path):
    changed = dict(DOCS[0], text="The Volga reaches Astrakhan before the Caspian Sea.")
    new = {"id": "seine", "title": "Seine", "text": "The Seine flows through Paris past Notre Dame."}
    built.add([_corpus(tmp_path / "more", [changed, new])], progress=False)
    _assert_in_step(built)
    assert built.entities.search(["nizhny novgorod"], pool=5)[0].size == 0, "the replaced chunk's entities go"
    assert _doc_of_rows(built, built.entities.search(["astrakhan"], pool=5)[0]) == ["volga"]
    assert set(_doc_of_rows(built, built.entities.search(["paris"], pool=5)[0])) == {"curie", "seine"}
    built.delete(["seine"])
    reopened = IndexBundle.open(built.path)
    _assert_in_step(reopened)
    assert _doc_of_rows(reopened, reopened.entities.search(["paris"], pool=5)[0]) == ["curie"]
    assert reopened.entities.search(["notre dame"], pool=5)[0].size == 0


def _make_old_bundle(bundle):
    """Turn a bundle into what a build before the entity field wrote: no table, no files, no manifest key."""
    path = bundle.path
    bundle.close()
    db = sqlite3.connect(path / "docstore.sqlite")
    db.execute("DROP TABLE entities")
    db.commit()
    db.execute("VACUUM")
    db.close()
    for name in ("entities/entities.json", "entities/entity_rows.npz", "graph/graph.npz"):
        (path / name).unlink()
    (path / "entities").rmdir()
    (path / "graph").rmdir()
    manifest = json.loads((path / "manifest.json").read_text())
    del manifest["entities"]
    del manifest["graph"]
    del manifest["settings"]["entities"]
    manifest["files"] = {name: digest for name, digest in manifest["files"].items()
                         if not name.startswith(("entities/", "graph/"))}
    manifest["files"]["docstore.sqlite"] = bundle_module._file_digest(path / "docstore.sqlite")
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_old_bundle_opens_without_entities_and_add_backfills(built, tmp_path, monkeypatch):
    _make_old_bundle(built)
    old = IndexBundle.open(built.path)
    assert not old.has_entities and len(old.entities) == 0
    assert old.entities.search(["marie curie"], pool=5)[0].size == 0
    old.close()
    old = IndexBundle.open(built.path)  # opening must not have touched the docstore (its checksum still holds)
    embedded = []
    real_embed = ingest_module.embed_passages_cached

    def recording_embed(embedder, passages, **kwargs):
        embedded.extend(passages)
        return real_embed(embedder, passages, **kwargs)

    monkeypatch.setattr(ingest_module, "embed_passages_cached", recording_embed)
    report = old.add([_corpus(tmp_path / "more", [*DOCS, {"id": "nile", "title": "Nile",
                                                          "text": "The Nile flows through Cairo."}])],
                     progress=False)
    assert report.documents_added == 1 and report.documents_unchanged == 3
    assert report.entities_backfilled == 3, "only the existing chunks are backfilled; the new one had NER already"
    assert old.has_entities and old.manifest["entities"]["chunks_with_entities"] == 4
    assert embedded == ["Nile. The Nile flows through Cairo."], "backfilling runs NER only, no re-embedding"
    _assert_in_step(old)
    assert _doc_of_rows(old, old.entities.search(["marie curie"], pool=5)[0]) == ["curie"]
    assert _doc_of_rows(old, old.entities.search(["cairo"], pool=5)[0]) == ["nile"]


def test_add_with_nothing_new_upgrades_an_old_bundle_and_delete_leaves_it_alone(built):
    _make_old_bundle(built)
    old = IndexBundle.open(built.path)
    old.delete(["thames"])
    assert not old.has_entities and len(old.dense) == 2
    report = old.add()
    assert report.entities_backfilled == 2 and old.has_entities
    _assert_in_step(old)
    assert old.add().entities_backfilled == 0, "an upgraded bundle is not rewritten again"


def test_bundle_built_without_entities_stays_without(tmp_path, tiny_embedder_dir):
    settings = IndexSettings(embedder=str(tiny_embedder_dir), entities=False)
    bundle, _ = IndexBundle.build(tmp_path / "index", [_corpus(tmp_path / "docs", DOCS)], settings, progress=False)
    assert not bundle.has_entities and not any(n.startswith("entities/") for n in bundle.manifest["files"])
    assert bundle.add().entities_backfilled == 0 and not bundle.has_entities


@pytest.fixture
def dated(tmp_path):
    store = DocStore(tmp_path / "docstore.sqlite")
    metadata = [{"date": "2023-12-31", "pages": 3}, {"date": "2024-03-01", "pages": 12},
                {"date": "2024-12-31", "pages": 40}, {"date": "2025-01-02", "pages": "many"}, {}]
    store.add([1, 2, 3, 4, 5], [Chunk(id=f"c{i}", doc_id=f"d{i}", text="t", metadata={**m, "category": f"cs.{i}"})
                                for i, m in enumerate(metadata)])
    yield store
    store.close()


def test_range_filters_on_dates_and_numbers(dated):
    assert dated.filter_rows({"date": {"gte": "2024-01-01", "lte": "2024-12-31"}}).tolist() == [2, 3]
    assert dated.filter_rows({"date": {"gt": "2024-12-31"}}).tolist() == [4]
    assert dated.filter_rows({"date": {"lt": "2024-03-01"}}).tolist() == [1]
    assert dated.filter_rows({"pages": {"gte": 10}}).tolist() == [2, 3], "numbers compare as numbers; 'many' is out"
    assert dated.filter_rows({"pages": {"lte": 12.5}, "date": {"gte": "2024"}}).tolist() == [2]
    assert dated.filter_rows({"category": {"prefix": "cs."}, "pages": {"gt": 3}}).tolist() == [2, 3]


def test_unknown_filter_operators_are_refused_clearly(dated):
    with pytest.raises(ValueError, match="unknown operator.*'between'"):
        dated.filter_rows({"date": {"between": ["2024", "2025"]}})
    with pytest.raises(ValueError, match="unknown operator"):
        dated.filter_rows({"date": {}})
    with pytest.raises(ValueError, match="string or a number"):
        dated.filter_rows({"date": {"gte": ["2024"]}})


def test_docstore_entities_follow_document_deletes(dated):
    assert not dated.has_entities() and dated.entities_of([1, 2]) == [[], []]
    dated.set_entities([1, 2], [["paris"], []])
    assert dated.entities_of([2, 1, 9]) == [[], ["paris"], []]
    dated.delete_documents(["d0"])
    assert dict(dated.iter_entities()) == {2: [], 3: [], 4: [], 5: []}
