"""Metadata boosts (filter syntax, fused * multiplier) and the corpus category predictor."""

from __future__ import annotations

import numpy as np
import pytest

from rag.retrieval.metadata import (
    CategoryPredictor,
    apply_boosts,
    category_levels,
    matches,
    metadata_boosts,
)
from stores.bundle import IndexBundle
from stores.dense import DenseIndex
from stores.docstore import DocStore
from stores.types import Chunk
from tests.fixtures.graph import DOCS, build_tiny_index

# (category, direction of its vectors, language, date)
CORPUS = [
    ("cs.AI", (1.0, 0.1, 0.0, 0.0), "en", "2023-05-01"),
    ("cs.AI", (1.0, 0.2, 0.0, 0.0), "en", "2024-02-10"),
    ("cs.AI", (0.9, 0.0, 0.1, 0.0), "ru", "2024-07-30"),
    ("cs.CL", (0.4, 1.0, 0.0, 0.0), "en", "2022-01-15"),
    ("cs.CL", (0.3, 1.0, 0.1, 0.0), "ru", "2024-03-03"),
    ("cs.CL", (0.5, 0.9, 0.0, 0.0), "en", "2025-01-01"),
    ("math.PR", (0.0, 0.0, 0.2, 1.0), "en", "2021-06-06"),
    ("math.PR", (0.0, 0.1, 0.1, 1.0), "ru", "2024-04-04"),
    ("math.PR", (0.1, 0.0, 0.0, 1.0), "en", "2024-09-09"),
    ("physics", (0.0, 0.0, 1.0, 0.1), "en", "2020-01-01"),  # one document only: below min_docs
]


def unit(vector) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture()
def stores(tmp_path):
    docstore = DocStore(tmp_path / "docstore.sqlite")
    rows = list(range(1, len(CORPUS) + 1))
    chunks = [
        Chunk(id=f"d{i}#0", doc_id=f"d{i}", title=f"Doc {i}", text=f"text {i}",
              metadata={"category": cat, "language": lang, "date": date, "year": int(date[:4])})
        for i, (cat, _, lang, date) in enumerate(CORPUS)
    ]
    docstore.add(rows, chunks)
    dense = DenseIndex(dim=4)
    dense.add(rows, np.stack([unit(v) for _, v, _, _ in CORPUS]))
    yield docstore, dense, rows
    docstore.close()


def test_a_matching_row_is_ranked_up_by_its_multiplier(stores):
    docstore, _, rows = stores
    fused = np.array([0.50, 0.46, 0.40] + [0.1] * (len(rows) - 3))
    multipliers = metadata_boosts(docstore.get(rows), {"language": "ru"}, default_weight=0.2)
    assert multipliers[:3].tolist() == [1.0, 1.0, 1.2]
    boosted = apply_boosts(fused, multipliers)
    assert boosted[2] == pytest.approx(0.48) and np.argsort(-boosted)[:2].tolist() == [0, 2]
    weighted = metadata_boosts(docstore.get(rows), {"language": {"value": "ru", "weight": 0.5}, "category": "cs.AI"})
    assert weighted[:3].tolist() == pytest.approx([1.2, 1.2, 1.7])  # weights of every matching spec add up
    assert metadata_boosts(docstore.get(rows), {}).tolist() == [1.0] * len(rows)


def test_boost_specs_use_the_filter_syntax_with_prefixes_lists_and_ranges(stores):
    docstore, _, rows = stores
    matched = lambda boosts: [i for i, m in enumerate(metadata_boosts(docstore.get(rows), boosts)) if m > 1]  # noqa: E731
    assert matched({"category": {"prefix": "cs."}}) == [0, 1, 2, 3, 4, 5]
    assert matched({"category": ["math.PR", "physics"]}) == [6, 7, 8, 9]
    assert matched({"date": {"gte": "2024-01-01", "lte": "2024-12-31"}}) == [1, 2, 4, 7, 8]
    assert matched({"year": {"gt": 2024}}) == [5]
    assert matched({"doc_id": "d3"}) == [3]
    assert matched({"missing": "x"}) == []
    assert not matches(2024, {"gte": "2024-01-01"})  # incomparable types never match, never raise
    with pytest.raises(ValueError):
        matches("cs.AI", {"regex": "cs"})


def test_hierarchical_labels_count_for_their_parents():
    assert category_levels("cs.AI") == ["cs", "cs.AI"]
    assert category_levels("science/physics/optics") == ["science", "science/physics", "science/physics/optics"]
    assert category_levels("physics") == ["physics"]


def test_predictor_finds_the_category_of_a_query_at_each_level(stores):
    docstore, dense, rows = stores
    predictor = CategoryPredictor.build(docstore, dense, key="category", min_docs=3)
    assert predictor is not None
    assert predictor.labels == ["cs", "cs.AI", "cs.CL", "math", "math.PR"]  # physics has 1 document
    language_query = unit((0.4, 1.0, 0.05, 0.0))
    ranked = predictor.predict(language_query)
    confidence = dict(ranked)
    assert confidence["cs.CL"] > confidence["cs.AI"] > confidence["math.PR"]
    assert confidence["cs"] > confidence["math"] and confidence["cs"] + confidence["math"] == pytest.approx(1, 1e-3)
    assert ranked[0][0] == "cs"
    assert dict(predictor.predict(unit((0.0, 0.05, 0.1, 1.0)), top=2)).keys() == {"math", "math.PR"}
    boosts = predictor.boosts(language_query, min_confidence=0.5, weight=0.3)
    assert boosts["category"]["weight"] == 0.3
    assert [i for i, m in enumerate(metadata_boosts(docstore.get(rows), boosts)) if m > 1] == [3, 4, 5]
    assert predictor.boosts(language_query, min_confidence=1.01) == {}


def test_predictor_is_none_without_categories_and_cached_per_bundle(tmp_path, tiny_embedder_dir):
    plain = IndexBundle.open(build_tiny_index(tmp_path / "plain", tiny_embedder_dir))
    assert CategoryPredictor.from_bundle(plain) is None
    categorized_docs = [{**doc, "category": "geo.rivers" if i < 2 else "science"} for i, doc in enumerate(DOCS)]
    categorized_docs += [{"id": f"extra{i}", "title": f"River {i}", "text": f"The river {i} flows through the city.",
                          "category": "geo.cities"} for i in range(3)]
    bundle = IndexBundle.open(build_tiny_index(tmp_path / "cats", tiny_embedder_dir, categorized_docs))
    predictor = CategoryPredictor.from_bundle(bundle, min_docs=2)
    assert predictor is not None and {"geo", "geo.rivers", "geo.cities", "science"} <= set(predictor.labels)
    assert CategoryPredictor.from_bundle(bundle, min_docs=2) is predictor
    query = bundle.dense.vectors_for([1])[0]
    assert {label for label, _ in predictor.predict(query)} == set(predictor.labels)
    assert CategoryPredictor.from_bundle(bundle, key="language") is None  # one language: nothing to choose
    plain.close()
    bundle.close()
