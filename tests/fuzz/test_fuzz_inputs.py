"""Fuzzing what a caller hands the graph (issue 45): run inputs and contexts of every JSON type (non-dict inputs,
chat messages of every shape, Context fields with values of any type) and filters whose values mix types. Allowed
outcomes: an answer, or a refusal that is a ValueError (a context field of the wrong type: TypeError) with a
message; anything else (an error from inside LangGraph or LangChain, an AttributeError, an OverflowError, a
GraphRecursionError) is a crash."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.policy import field_names
from stores.bundle import IndexBundle
from stores.docstore import FilterError
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator
from tests.fuzz.conftest import examples, tally
from tests.fuzz.strategies import JSON_LIKE, PIECES, QUESTIONS, SCALARS

QUESTION = "Which river flows into the Caspian Sea?"


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("fuzz-inputs-index"), tiny_embedder_dir)


@pytest.fixture(scope="module")
def operator(index):
    """The operator's settings a dict context starts from: the tiny index, the keyword evaluator, no web."""
    patch = pytest.MonkeyPatch()
    use_keyword_evaluator(patch)
    for name, value in {"INDEX": str(index), "EVALUATOR": "cosine", "WEB_SEARCH": "false",
                        "ANSWER_THRESHOLD": "0"}.items():
        patch.setenv(f"CRAGRAPH_{name}", value)
    yield index
    patch.undo()


def _run(target: str, run_input: object, run_context: object) -> None:
    from graph import graph

    tally(target, cases=1)
    try:
        result = graph.invoke(run_input, {"recursion_limit": 200}, context=run_context)
    except (ValueError, TypeError) as refused:  # TypeError: a Context field of the wrong type (policy.check_types)
        assert str(refused) and type(refused).__module__.startswith(("cragraph", "rag", "models", "stores", "nodes",
                                                                     "builtins")), (
            type(refused), refused)
        tally(target, refused=1)
        return
    assert isinstance(result.get("answer", ""), str)
    tally(target, answered=1)


ROLES = st.one_of(st.sampled_from(["user", "human", "assistant", "ai", "system", "tool", "bogus", ""]), SCALARS)
MESSAGES = st.one_of(
    st.lists(
        st.one_of(
            QUESTIONS,
            st.fixed_dictionaries({"role": ROLES, "content": st.one_of(QUESTIONS, JSON_LIKE)}),
            st.fixed_dictionaries({"type": ROLES, "content": st.one_of(QUESTIONS, JSON_LIKE)}),
            st.fixed_dictionaries({"role": ROLES}),
            st.fixed_dictionaries({"role": st.just("user"), "content": st.lists(
                st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": QUESTIONS}), SCALARS), max_size=3)}),
            JSON_LIKE,
        ),
        max_size=3,
    ),
    JSON_LIKE,
)
INPUTS = st.one_of(
    JSON_LIKE,  # every JSON type, dicts without the fields included
    st.fixed_dictionaries({"messages": MESSAGES}),
    st.fixed_dictionaries({"question": st.one_of(QUESTIONS, SCALARS)},
                          optional={"filters": JSON_LIKE, "recommend_only": SCALARS, "messages": MESSAGES}),
)


@settings(max_examples=examples(60))
@given(run_input=INPUTS)
def test_any_input_is_answered_or_refused_by_name(operator, run_input: object) -> None:
    _run("graph inputs", run_input, context(operator))


# Fields a client may reach (the operator's own CRAGRAPH_* values refuse the rest), without the LLM stages: the
# embedded chat model would load for each case and decide nothing about how a value is checked.
CONTEXT_FIELDS = st.sampled_from([name for name in field_names() if not name.startswith("llm_")])
CONTEXTS = st.one_of(
    JSON_LIKE,  # None, numbers, strings, lists and dicts of unknown fields
    st.dictionaries(CONTEXT_FIELDS, st.one_of(JSON_LIKE, st.integers(-(10**400), 10**400)), max_size=3),
    st.dictionaries(st.sampled_from(["answer_threshold", "max_retrieval_rounds", "upper", "class_alphas"]),
                    st.one_of(SCALARS, st.dictionaries(PIECES, SCALARS, max_size=2)), max_size=2),
)


@settings(max_examples=examples(60))
@given(run_context=CONTEXTS)
def test_any_context_is_used_or_refused_by_name(operator, run_context: object) -> None:
    _run("contexts", {"question": QUESTION}, run_context)


BOUNDS = st.one_of(st.text(max_size=6), st.integers(-(10**20), 10**20), st.floats(), st.booleans(), st.none(), PIECES)
MIXED = st.one_of(
    st.dictionaries(st.sampled_from(["gte", "gt", "lte", "lt"]), BOUNDS, min_size=1, max_size=4),
    st.lists(st.one_of(BOUNDS, st.dictionaries(st.sampled_from(["gte", "lt", "prefix"]), BOUNDS, min_size=1,
                                               max_size=2)), max_size=4),
    BOUNDS,
)
MIXED_FILTERS = st.dictionaries(st.sampled_from(["founded", "language", "title", "doc_id", "nofield"]), MIXED,
                                min_size=1, max_size=2)


@pytest.fixture(scope="module")
def docstore(index):
    bundle = IndexBundle.open(index)
    yield bundle.docstore
    bundle.close()


@settings(max_examples=examples(150))
@given(filters=MIXED_FILTERS)
def test_a_filter_of_mixed_types_runs_or_is_refused(docstore, filters: dict) -> None:
    tally("mixed-type filters", cases=1)
    mixed = any(isinstance(spec, dict) and set(spec) <= {"gte", "gt", "lte", "lt"}
                and len({isinstance(bound, str) for bound in spec.values()}) > 1 for spec in filters.values())
    try:
        docstore.filter_rows(filters)
    except FilterError as refused:
        assert str(refused)
        tally("mixed-type filters", refused=1)
        return
    assert not mixed, f"a range mixing strings and numbers ran: {filters}"


@settings(max_examples=examples(30))
@given(filters=MIXED_FILTERS)
def test_the_graph_takes_or_refuses_mixed_type_filters(operator, filters: dict) -> None:
    _run("graph filters", {"question": QUESTION, "filters": filters}, context(operator))
