"""BM25Index scores like rank-bm25's BM25Okapi, stays exact under add/delete, and round-trips to disk."""

import json

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from stores.bm25 import BM25Index
from stores.tokenize import tokenize

CORPUS = [
    "The cat sat on the mat with another cat.",
    "Dogs chase cats in the garden every morning.",
    "A garden of roses and tulips blooms in spring.",
    "Cats and dogs are common pets; cats sleep a lot.",
    "Quantum computers use qubits instead of bits.",
    "Spring rain waters the garden and the roses.",
    "Pets need food, water and a garden to run in.",
]
QUERIES = [
    "cat",
    "cats cats dogs",  # repeated query term counts twice, as in rank-bm25
    "garden roses spring",  # 'garden' is in more than half the docs: its idf is floored at epsilon * mean
    "qubits computer",
    "pets water food garden cat dog",
]
IDS = [100 + 3 * i for i in range(len(CORPUS))]


def build(ids=IDS, corpus=CORPUS, **params) -> BM25Index:
    index = BM25Index(**params)
    index.add(ids, corpus)
    return index


def okapi(corpus=CORPUS, k1=1.2, b=0.75, epsilon=0.25) -> BM25Okapi:
    """rank-bm25's reference over the same tokens, with BM25Index's defaults (BM25Okapi's own k1 is 1.5)."""
    return BM25Okapi([tokenize(p) for p in corpus], k1=k1, b=b, epsilon=epsilon)


@pytest.mark.parametrize("params", [{}, {"k1": 0.9, "b": 0.4, "epsilon": 0.5}])
def test_scores_equal_bm25okapi(params):
    index, reference = build(**params), okapi(k1=params.get("k1", 1.2), b=params.get("b", 0.75),
                                              epsilon=params.get("epsilon", 0.25))
    assert any(v == reference.epsilon * reference.average_idf for v in reference.idf.values())
    for query in QUERIES:
        expected = reference.get_scores(tokenize(query))
        np.testing.assert_allclose(index.scores_for(query, IDS), expected, rtol=0, atol=1e-6)
        ids, scores = index.search(query, k=len(CORPUS))
        positive = expected > 0
        assert sorted(ids.tolist()) == sorted(np.asarray(IDS)[positive].tolist())
        assert np.all(np.diff(scores) <= 0)
        np.testing.assert_allclose(scores, np.sort(expected[positive])[::-1], atol=1e-6)


def test_search_returns_top_k_best_first():
    index = build()
    ids, scores = index.search("cats dogs garden", k=2)
    full_ids, full_scores = index.search("cats dogs garden", k=100)
    assert ids.tolist() == full_ids[:2].tolist() and len(ids) == 2
    assert ids.dtype == np.int64 and scores[0] >= scores[1] > 0


def test_empty_and_unknown_queries_return_empty_arrays():
    index = build()
    for query in ["", "   ", "the and of", "zebra xylophone"]:
        ids, scores = index.search(query, k=5)
        assert ids.size == 0 and scores.size == 0
        assert not index.scores_for(query, IDS).any()
    empty = BM25Index()
    assert empty.search("cat", k=3)[0].size == 0 and len(empty) == 0


def test_huge_query_works_and_counts_repeats():
    index = build()
    query = ("cats garden qubits unknownword " * 4000)[:100_000]
    assert len(query) == 100_000
    ids, scores = index.search(query, k=3)
    assert ids.size == 3
    expected = okapi().get_scores(tokenize(query))
    np.testing.assert_allclose(index.scores_for(query, IDS), expected, rtol=1e-9)


def test_allowed_restricts_results():
    index = build()
    allowed = np.array([IDS[1], IDS[4], 999_999])  # an unknown id is ignored
    ids, _ = index.search("cats dogs garden", k=5, allowed=allowed)
    assert ids.tolist() == [IDS[1]]  # doc 4 (qubits) does not match, so it is left out
    assert index.search("cats", k=5, allowed=np.array([], dtype=np.int64))[0].size == 0


def test_scores_for_absent_ids_is_zero():
    index = build()
    scores = index.scores_for("cat", [IDS[0], 5, IDS[3]])
    assert scores[1] == 0 and scores[0] > 0 and scores[2] > 0


def test_incremental_add_equals_one_build():
    whole = build()
    parts = BM25Index()
    parts.add(IDS[:3], CORPUS[:3])
    parts.add(IDS[3:], CORPUS[3:])
    assert parts.ids.tolist() == IDS and len(parts) == len(CORPUS)
    for query in QUERIES:
        np.testing.assert_allclose(parts.scores_for(query, IDS), whole.scores_for(query, IDS), atol=1e-12)


def test_delete_equals_index_of_remaining_docs():
    index = build()
    assert index.delete([IDS[4], IDS[0], 12345]) == 2
    assert index.delete([IDS[4]]) == 0
    keep = [i for i in range(len(CORPUS)) if i not in (0, 4)]
    reference = okapi([CORPUS[i] for i in keep])
    kept_ids = [IDS[i] for i in keep]
    assert sorted(index.ids.tolist()) == kept_ids and len(index) == len(keep)
    for query in QUERIES:
        np.testing.assert_allclose(index.scores_for(query, kept_ids), reference.get_scores(tokenize(query)),
                                   atol=1e-6)
    assert index.search("qubits", k=3)[0].size == 0  # its only doc is gone


def test_add_existing_id_replaces_its_text():
    index = build()
    index.add([IDS[4]], ["Tulips and roses"])
    assert len(index) == len(CORPUS)
    assert index.search("qubits", k=3)[0].size == 0
    assert IDS[4] in index.search("tulips", k=3)[0].tolist()


def test_add_rejects_mismatched_or_duplicate_ids():
    index = BM25Index()
    with pytest.raises(ValueError):
        index.add([1, 2], ["only one"])
    with pytest.raises(ValueError):
        index.add([1, 1], ["a", "b"])


def test_save_load_round_trip(tmp_path):
    index = build(k1=1.0, b=0.6, epsilon=0.3)
    names = index.save(tmp_path / "bm25")
    assert sorted(names) == sorted(p.name for p in (tmp_path / "bm25").iterdir())
    assert all(name.endswith((".npz", ".json")) for name in names)
    loaded = BM25Index.load(tmp_path / "bm25")
    assert (loaded.k1, loaded.b, loaded.epsilon) == (1.0, 0.6, 0.3)
    assert loaded.ids.tolist() == index.ids.tolist()
    for query in QUERIES:
        np.testing.assert_array_equal(loaded.scores_for(query, IDS), index.scores_for(query, IDS))
    loaded.add([1], ["cats on a quantum mat"])  # still incremental after a load
    assert loaded.search("quantum", k=5)[0].tolist()[0] == 1


def test_load_refuses_another_tokenizer(tmp_path):
    build().save(tmp_path)
    meta = json.loads((tmp_path / "bm25.json").read_text(encoding="utf-8"))
    meta["tokenizer"] = "whitespace"
    (tmp_path / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="tokenizer"):
        BM25Index.load(tmp_path)


def test_russian_query_finds_inflected_forms():
    index = BM25Index()
    index.add([1, 2, 3], ["Книги о войне и мире лежали на столе.", "Рецепт пирога с яблоками.",
                          "Погода в Москве летом."])
    ids, _ = index.search("книга про войну", k=3)
    assert ids.tolist() == [1]


def test_chinese_and_mixed_corpus():
    index = BM25Index()
    index.add([1, 2, 3], ["灰狼队的防守丢了18个球。", "海港杯50在布伦霍尔特举行。",
                          "The Lancers defense allowed 18 goals."])
    assert index.search("灰狼队防守", k=3)[0].tolist() == [1]
    assert index.search("海港杯在哪里举行？", k=3)[0].tolist()[0] == 2
    assert index.search("Lancers' defenses", k=3)[0].tolist() == [3]


@pytest.mark.parametrize("written", ["simplified", "traditional"])
def test_a_chinese_question_finds_passages_written_in_the_other_script(written):
    from stores.chinese_script import traditional

    # the distractor shares the bigrams both scripts write alike (在半, 了白); the answer, the others
    passages = ["白鸽队在半决赛中击败了北岭钢铁队。", "他们在半山上看了白云以后在半路休息。", "长江是亚洲最长的河流。"]
    question = "谁在半决赛中输给了白鸽队？"
    if written == "traditional":
        passages = [traditional(p) for p in passages]
    else:
        question = traditional(question)
    index = build([1, 2, 3], passages)
    ids, _ = index.search(question, 3)
    assert list(ids)[0] == 1
