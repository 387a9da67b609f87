"""Regression tests for issue 14: a filter of the wrong shape is refused with FilterError (a ValueError that
names the field), never a sqlite3 error, an OverflowError or an AttributeError; NaN metadata cannot poison the
docstore; a lone surrogate in a query is searched like any other character."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rag.retrieval.metadata import metadata_boosts
from rag.retrieval.retriever import HybridRetriever
from stores.bundle import IndexBundle, IndexSettings
from stores.docstore import DocStore, FilterError
from stores.types import Chunk


@pytest.fixture
def store(tmp_path: Path):
    store = DocStore(tmp_path / "docstore.sqlite")
    store.add(
        [1, 2, 3],
        [
            Chunk("a#0", "a", "alpha", "A", {"language": "en", "year": 2020}),
            Chunk("b#0", "b", "бета", "B", {"language": "ru", "year": 2021}),
            Chunk("c#0", "c", "gamma", "C", {"language": "es"}),
        ],
    )
    yield store
    store.close()


def test_a_list_of_prefixes_is_an_any_of(store: DocStore) -> None:
    assert store.filter_rows({"language": [{"prefix": "e"}]}).tolist() == [1, 3]
    assert store.filter_rows({"language": [{"prefix": "r"}, "es"]}).tolist() == [2, 3]
    assert store.filter_rows({"year": [{"gte": 2021}, "es"]}).tolist() == [2]
    assert store.filter_rows({"language": []}).tolist() == []


@pytest.mark.parametrize(
    ("filters", "names"),
    [
        ("language=en", "mapping"),
        (["language", "en"], "mapping"),
        ({"language": 10**30}, "64-bit"),
        ({"year": {"gte": -(10**30)}}, "64-bit"),
        ({"language": {"nested": {"deeper": 1}}}, "unknown operator"),
        ({"language": [["en"]]}, "list item"),
        ({"language": {"prefix": ["e"]}}, "'prefix' must be a string"),
        ({"language": b"en"}, "bytes"),
        ({"language": float("nan")}, "finite"),
        ({"language": "a\udfffb"}, "Unicode"),
        ({'la"ng': "en"}, "quotes"),
        ({"": "en"}, "non-empty"),
        ({"\x00": None}, "control characters"),  # found by `make fuzz`: sqlite3 "JSON path error"
        ({"lang\nuage": "en"}, "control characters"),
        ({1: "en"}, "field 1"),
        ({"language": object()}, "object"),
        ({"year": {"gte": "a", "lte": 1}}, "mix strings and numbers"),  # issue 45: matched nothing, silently
        ({"year": [{"gt": 2020.5, "lt": "2022"}]}, "mix strings and numbers"),
    ],
)
def test_wrong_shapes_are_refused_clearly(store: DocStore, filters: object, names: str) -> None:
    with pytest.raises(FilterError, match=names):
        store.filter_rows(filters)  # type: ignore[arg-type]


def test_nan_metadata_is_refused_naming_the_chunk(store: DocStore) -> None:
    with pytest.raises(ValueError, match="'d#0'"):
        store.add([4], [Chunk("d#0", "d", "delta", "D", {"score": math.nan})])
    assert store.filter_rows({"language": "en"}).tolist() == [1]  # the table's JSON is still well-formed


def test_bad_boost_weights_are_refused() -> None:
    chunk = Chunk("a#0", "a", "alpha", "A", {"language": "en"})
    with pytest.raises(ValueError, match="mapping"):
        metadata_boosts([chunk], "language=en")  # type: ignore[arg-type]
    for weight in ([1], "lots", 10**400, math.inf):
        with pytest.raises(ValueError, match="weight"):
            metadata_boosts([chunk], {"language": {"value": "en", "weight": weight}})


def test_lone_surrogates_and_bad_filters_through_search(tmp_path: Path, tiny_embedder_dir: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "c.jsonl").write_text(
        json.dumps({"id": "curie", "text": "Marie Curie founded the Radium Institute in Paris."})
        + "\n"
        + '{"id": "nan", "text": "Bad metadata.", "metadata": {"score": NaN}}\n',
        encoding="utf-8",
    )
    bundle, report = IndexBundle.build(
        tmp_path / "index", [docs], IndexSettings(embedder=str(tiny_embedder_dir), entities=False), progress=False
    )
    assert bundle.docstore.document_ids() == {"curie"} and len(report.skipped) == 1
    retriever = HybridRetriever(bundle)
    for query in ("a\udfffb", "Radium \udcff Institute", "\ud800"):
        assert [hit.chunk.doc_id for hit in retriever.search(query, k=3)] == ["curie"]
    with pytest.raises(FilterError):
        retriever.search("Radium", filters="language=en")  # type: ignore[arg-type]
    bundle.close()
