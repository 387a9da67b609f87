"""Rule-based query variants: keywords, spelling correction against the vocabulary, NPMI corpus synonyms."""

import pytest

from rag.retrieval.multi_query import closest_term, corpus_neighbour, keyword_form, levenshtein, rule_variants
from stores.bm25 import BM25Index
from stores.tokenize import tokenize

CORPUS = [
    "Photosynthesis converts light energy into chemical energy in plants.",
    "Chlorophyll absorbs light for photosynthesis in the leaves of plants.",
    "The Amazon rainforest produces oxygen through photosynthesis.",
    "Albert Einstein developed the theory of relativity.",
    "Einstein received the Nobel Prize in Physics in 1921.",
    "The Nobel Prize in Physics honours discoveries; Einstein and Bohr both won it.",
    "Rainforest trees store carbon and release oxygen.",
    "Москва является столицей России.",
    "Столица России Москва стоит на реке Москве.",
    "北京是中国的首都，也是文化中心。",
    "上海是中国最大的城市。",
] + [f"Filler passage number {i} about gardens, rivers and weather." for i in range(30)]


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    index = BM25Index()
    index.add(list(range(len(CORPUS))), CORPUS)
    return index


def test_levenshtein_stops_at_the_limit():
    assert levenshtein("photosynthes", "photosynthesi", 2) == 1
    assert levenshtein("kitten", "sitting", 3) == 3
    assert levenshtein("kitten", "sitting", 1) == 2  # limit + 1: beyond the band


def test_spelling_fixes_a_misspelt_term(bm25):
    assert closest_term(tokenize("photosinthesis")[0], bm25) == tokenize("photosynthesis")[0]
    variants = dict((kind, text) for text, kind in rule_variants("How does photosinthesis work?", bm25, "en", 3))
    assert "spelling" in variants
    assert tokenize("photosynthesis")[0] in tokenize(variants["spelling"])
    ids, _ = bm25.search(variants["spelling"], 3)
    assert set(ids.tolist()) <= {0, 1, 2}  # the corrected query finds the photosynthesis passages


def test_no_spelling_variant_when_every_term_is_known(bm25):
    kinds = [kind for _, kind in rule_variants("Einstein relativity theory", bm25, "en", 3)]
    assert "spelling" not in kinds


def test_keywords_drop_question_and_stop_words():
    assert keyword_form("Who developed the theory of relativity?") == "developed theory relativity"
    assert keyword_form("Какой город является столицей России?") == "город является столицей России"
    assert keyword_form("什麼 是 相對論") == keyword_form("什么 是 相对论").replace("相对论", "相對論") == "相對論"


def test_synonym_neighbour_is_a_strongly_cooccurring_term(bm25):
    assert corpus_neighbour(tokenize("Einstein")[0], bm25) in {tokenize(w)[0] for w in ("Nobel", "Prize", "Physics")}
    assert corpus_neighbour(tokenize("gardens")[0], bm25) is None  # in every filler passage: too common


def test_variants_are_distinct_from_the_query_and_capped(bm25):
    query = "Who won the Nobel Prize with Einstein?"
    variants = rule_variants(query, bm25, "en", 3)
    texts = [text for text, _ in variants]
    assert query not in texts and len(set(texts)) == len(texts) <= 3
    assert {kind for _, kind in variants} <= {"keywords", "spelling", "synonyms"}
    assert len(rule_variants(query, bm25, "en", 1)) == 1
    assert [kind for _, kind in rule_variants("Einstein Nobel", bm25, "en", 3)] == ["synonyms"]  # keywords == query


def test_russian_and_chinese_do_not_crash(bm25):
    ru = rule_variants("Какая река течёт через Моськву?", bm25, "ru", 3)
    assert any(kind == "spelling" for _, kind in ru)  # Моськву -> the indexed stem of Москва
    zh = rule_variants("中国的首都是哪里？", bm25, "zh", 3)
    assert all(kind != "spelling" for _, kind in zh)
