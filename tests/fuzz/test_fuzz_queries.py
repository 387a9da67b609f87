"""Fuzzing questions and filters (issue 14): through the tokenizer, the hybrid search and the graph's no-LLM path
on a tiny index. Allowed outcomes: results, or a documented refusal (QueryError / FilterError, both ValueError,
with a message); anything else is a crash."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.retrieval.retriever import HybridRetriever, QueryError
from stores.bundle import IndexBundle
from stores.docstore import FilterError
from stores.tokenize import tokenize
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator
from tests.fuzz.conftest import examples, tally
from tests.fuzz.strategies import ANY_CHAR, JSON_LIKE, PIECES, QUESTIONS, SCALARS


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("fuzz-index"), tiny_embedder_dir)


@pytest.fixture(scope="module")
def retriever(index):
    bundle = IndexBundle.open(index)
    yield HybridRetriever(bundle)
    bundle.close()


@settings(max_examples=examples(150))
@given(QUESTIONS)
def test_tokenize_takes_any_text(text: str) -> None:
    tally("tokenize", cases=1)
    terms = tokenize(text)
    assert all(isinstance(term, str) and term for term in terms)


FILTER_KEYS = st.one_of(
    st.sampled_from(["language", "category", "source", "id", "doc_id", "title", "date"]),
    st.text(ANY_CHAR, max_size=8),
    PIECES,
    st.integers(),
    st.none(),
)
FILTERS = st.one_of(
    st.none(),
    st.dictionaries(FILTER_KEYS, JSON_LIKE, max_size=3),
    st.dictionaries(
        st.sampled_from(["language", "category"]),
        st.one_of(
            SCALARS,
            st.fixed_dictionaries({"prefix": SCALARS}),
            st.dictionaries(st.sampled_from(["gte", "gt", "lte", "lt", "eq"]), SCALARS, max_size=2),
            st.lists(st.one_of(SCALARS, st.fixed_dictionaries({"prefix": SCALARS})), max_size=3),
        ),
        max_size=2,
    ),
    JSON_LIKE,
)


@settings(max_examples=examples(60))
@given(question=QUESTIONS, filters=FILTERS, mode=st.sampled_from(["hybrid", "bm25", "dense"]), k=st.integers(-2, 50))
def test_search_answers_or_refuses_clearly(
    retriever: HybridRetriever, question: str, filters: object, mode: str, k: int
) -> None:
    tally("search", cases=1)
    try:
        hits = retriever.search(question, k=k, mode=mode, filters=filters)  # type: ignore[arg-type]
    except (QueryError, FilterError) as refused:
        assert str(refused)
        tally("search", refused=1)
        return
    assert len(hits) <= max(k, 0)
    assert all(hit.chunk.doc_id for hit in hits)


@settings(max_examples=examples(40))
@given(question=QUESTIONS)
def test_the_graph_answers_or_refuses_clearly(index, monkeypatch_module, question: str) -> None:
    from graph import graph

    tally("graph", cases=1)
    try:
        result = graph.invoke({"question": question}, context=context(index))
    except ValueError as refused:  # QueryError and the graph's own input checks
        assert str(refused)
        tally("graph", refused=1, **{f"refused {type(refused).__name__}": 1})
        return
    assert isinstance(result.get("answer", ""), str)


@pytest.fixture(scope="module")
def monkeypatch_module():
    """The keyword evaluator for the whole module (no trained evaluator is loaded)."""
    patch = pytest.MonkeyPatch()
    use_keyword_evaluator(patch)
    yield patch
    patch.undo()


@settings(max_examples=examples(150))
@given(filters=FILTERS)
def test_filters_run_or_refuse_clearly(retriever: HybridRetriever, filters: object) -> None:
    tally("filters", cases=1)
    try:
        rows = retriever.bundle.docstore.filter_rows(filters)  # type: ignore[arg-type]
    except FilterError as refused:
        assert str(refused)
        tally("filters", refused=1)
        return
    assert set(rows.tolist()) <= {row for row, _ in retriever.bundle.docstore.iter_rows()}


# found by `make fuzz`: a question longer than the reader's max_length crashed the tokenizer's truncation
def test_a_long_question_reaches_an_answer(index, monkeypatch_module) -> None:
    from graph import graph

    result = graph.invoke({"question": "Radium Institute" * 83}, context=context(index))
    assert isinstance(result.get("answer", ""), str)
