"""RM3 expansion: weights sum to 1, feedback terms come from the top passages, no stop words or digits."""

import pytest

from rag.retrieval.prf import feedback_model, rm3_expansion
from stores.bm25 import BM25Index
from stores.tokenize import ENGLISH_STOPWORDS, tokenize

CORPUS = [
    "The Apollo 11 mission landed astronauts on the Moon in 1969; Armstrong walked on the lunar surface.",
    "Apollo astronauts collected lunar rocks; the Moon landing was watched by millions in 1969.",
    "Lunar geology studies rocks from the Moon brought back by Apollo crews.",
    "Gardens need water, sunlight and good soil to grow vegetables.",
    "Tomatoes and peppers grow well in warm gardens with rich soil.",
]


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    index = BM25Index()
    index.add([10, 11, 12, 13, 14], CORPUS)
    return index


def first_pass(bm25, query, k=3):
    ids, scores = bm25.search(query, k)
    return ids.tolist(), scores.tolist()


def test_weights_sum_to_one_and_keep_the_query_terms(bm25):
    rows, scores = first_pass(bm25, "Moon landing")
    weights = rm3_expansion("Moon landing", rows, scores, bm25, terms=5, docs=3, original_weight=0.5)
    assert sum(weights.values()) == pytest.approx(1.0)
    assert {"moon", "land"} <= set(weights)
    assert weights["moon"] >= 0.25  # half of the query model's 0.5 plus its feedback share
    assert len(weights) <= 2 + 5


def test_feedback_terms_come_from_the_top_passages_without_stopwords_or_digits(bm25):
    rows, scores = first_pass(bm25, "Moon landing")
    model = feedback_model(rows, scores, bm25, terms=8, docs=3)
    assert sum(model.values()) == pytest.approx(1.0)
    assert {"apollo", "lunar"} <= set(model)
    assert not set(model) & set(tokenize(" ".join(CORPUS[3:])))  # nothing from the garden passages
    assert not any(term.isdigit() or term in ENGLISH_STOPWORDS for term in model)


def test_expansion_finds_a_passage_the_query_alone_misses(bm25):
    rows, scores = first_pass(bm25, "Armstrong", k=1)
    weights = rm3_expansion("Armstrong", rows, scores, bm25, terms=10, docs=1)
    plain, _ = bm25.search("Armstrong", 5)
    expanded, _ = bm25.search_weighted(weights, 5)
    assert 12 not in plain.tolist() and 12 in expanded.tolist()  # the lunar-geology passage, via apollo/lunar


def test_original_weight_one_is_the_query_alone_and_output_is_deterministic(bm25):
    rows, scores = first_pass(bm25, "Moon rocks")
    assert rm3_expansion("Moon rocks", rows, scores, bm25, original_weight=1.0) == {"moon": 0.5, "rock": 0.5}
    assert rm3_expansion("Moon rocks", rows, scores, bm25) == rm3_expansion("Moon rocks", rows, scores, bm25)
    with pytest.raises(ValueError):
        rm3_expansion("Moon rocks", rows, scores, bm25, original_weight=1.5)


def test_no_first_pass_gives_the_query_model(bm25):
    assert rm3_expansion("Moon Moon rocks", [], [], bm25) == pytest.approx({"moon": 2 / 3, "rock": 1 / 3})
