"""Query features and classes against a tiny in-memory BM25 index."""

import pytest

from rag.retrieval.query_features import DEFAULT_ALPHAS, alpha_for, query_class, query_features
from stores.bm25 import BM25Index

CORPUS = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    "Paris is the capital and most populous city of France.",
    "The tower was designed by the engineering company of Gustave Eiffel.",
    "France is a country in Western Europe with a long history.",
    "The city of Paris hosts many museums, including the Louvre.",
    "NASA launched the Apollo 11 mission to the Moon in 1969.",
    "The Moon is Earth's only natural satellite.",
    "Apollo astronauts brought rock samples back from the Moon.",
    "Water boils at 100 degrees Celsius at sea level.",
    "Europe has many countries and a long shared history of trade.",
    "Москва является столицей России и крупнейшим городом страны.",
    "Пекин является столицей Китая.",
    "北京是中华人民共和国的首都。",
    "Night walks in the old city: Paris, its tower and its history books.",
    "A city guide to France at night, with history books about the tower.",
    "Books on the history of the city and the tower, read at night in France.",
]


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    index = BM25Index()
    index.add(list(range(len(CORPUS))), CORPUS)
    return index


def test_features_count_codes_acronyms_digits_and_oov(bm25):
    features = query_features("NASA Apollo-11 xyzzyq 1969", bm25)
    assert features.acronyms == 1
    assert features.codes == 1  # Apollo-11 mixes letters and digits
    assert features.digit_symbol_ratio > 0.2
    assert features.oov_ratio == pytest.approx(1 / 5)  # nasa apollo 11 xyzzyq 1969: only xyzzyq is unknown
    assert features.script == "latin" and features.language == "en"


def test_rare_terms_are_those_in_few_documents(bm25):
    common = query_features("Paris France", bm25)  # in 3 and 3 of 13 documents
    rare = query_features("Louvre Celsius", bm25)  # one document each
    assert common.rare_term_ratio == 0.0
    assert rare.rare_term_ratio == 1.0


def test_classes_follow_the_rule(bm25):
    assert query_class(query_features("NASA 1969", bm25)) == "term-heavy"
    assert query_class(query_features("Louvre Celsius", bm25)) == "term-heavy"
    long_question = "Which history books, read at night, are about the tower in the city of Paris, France?"
    assert query_class(query_features(long_question, bm25)) == "semantic"
    assert query_class(query_features("history of the tower in Paris", bm25)) == "mixed"


def test_russian_and_chinese_queries_get_features(bm25):
    ru = query_features("Какой город является столицей России?", bm25)
    zh = query_features("中华人民共和国的首都是哪里？", bm25)
    assert ru.script == "cyrillic" and ru.language == "ru" and ru.oov_ratio < 0.5
    assert zh.script == "cjk" and zh.language == "zh" and zh.n_terms > 3
    assert query_class(ru) in {"term-heavy", "semantic", "mixed"}


def test_alpha_for_uses_defaults_and_overrides():
    assert alpha_for("semantic") == DEFAULT_ALPHAS["semantic"]
    assert alpha_for("term-heavy", {"term-heavy": 0.3}) == 0.3
    assert alpha_for("term-heavy") < alpha_for("semantic")
    with pytest.raises(ValueError):
        alpha_for("lexical")
    with pytest.raises(ValueError):
        alpha_for("mixed", {"mixed": 1.5})
