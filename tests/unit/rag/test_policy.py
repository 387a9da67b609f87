"""What a client may set (issue 14): a run's dict context is checked against the operator's allow-list before
any node runs; the operator (CRAGRAPH_* env, a Context built in Python) still sets everything."""

from __future__ import annotations

import dataclasses

import pytest

from graph import graph
from rag.context import Context
from rag.policy import (
    ALLOW_ENV,
    BUDGETS,
    OPERATOR_ONLY,
    ClientContext,
    SettingRefused,
    UnknownSetting,
    allowed_fields,
    client_context,
    client_defaults,
    field_names,
)
from tests.fixtures.graph import build_tiny_index, cites_the_volga, context, use_keyword_evaluator, use_operator
from tests.fixtures.tavily_stub import TavilyStub

IN_CORPUS = "Which river flows into the Caspian Sea?"
OFF_CORPUS = "What is the population of Tokyo Japan?"
WEB_RESULT = {"url": "https://example.org/t", "title": "Tokyo", "content": "Tokyo has 14 million people.", "score": 1}


@pytest.fixture(scope="module")
def indexes(tmp_path_factory, tiny_embedder_dir):
    root = tmp_path_factory.mktemp("policy")
    served = build_tiny_index(root / "served", tiny_embedder_dir)
    other = build_tiny_index(
        root / "other", tiny_embedder_dir, [{"id": "secret", "title": "Secret", "text": "The vault code is 4711."}]
    )
    return served, other


@pytest.fixture
def operator(monkeypatch, indexes):
    """The server's configuration, as `langgraph dev` would get it: the test context's values as CRAGRAPH_* env."""
    use_keyword_evaluator(monkeypatch)
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-operator-secret")
    served, _ = indexes
    settings = context(served)
    for item in dataclasses.fields(Context):
        value = getattr(settings, item.name)
        if value != item.default and not isinstance(value, dict):
            monkeypatch.setenv(
                f"CRAGRAPH_{item.name.upper()}", str(value).lower() if isinstance(value, bool) else str(value)
            )
    return settings


def test_a_client_cannot_point_the_web_search_and_its_key_elsewhere(operator, monkeypatch):
    monkeypatch.setenv("CRAGRAPH_WEB_SEARCH", "true")
    with TavilyStub([WEB_RESULT]) as stub, pytest.raises(UnknownSetting, match="web_base_url is an operator setting"):
        graph.invoke({"question": OFF_CORPUS}, context={"web_base_url": stub.url})
    assert stub.requests == []  # no request, so no `Authorization: Bearer <key>` left the server


def test_a_client_may_turn_the_web_search_off_but_not_on(operator, monkeypatch):
    with pytest.raises(SettingRefused, match=r"web_search=True \(above the server's limit False\)"):
        client_context({"web_search": True})
    monkeypatch.setenv("CRAGRAPH_WEB_SEARCH", "true")
    assert client_context({"web_search": False}).web_search is False


@pytest.mark.parametrize("field", ["index", "evaluator", "chat_model", "index_uri"])
def test_a_client_cannot_choose_folders_or_models(operator, indexes, field):
    _, other = indexes
    for value in (str(other), "../other/index", f"cross-encoder:{other}"):
        with pytest.raises(SettingRefused) as refused:
            graph.invoke({"question": IN_CORPUS}, context={field: value})
        assert f"{field} (an operator setting)" in str(refused.value)
        assert "Unrecognized model" not in str(refused.value) and str(other) not in str(refused.value)


def test_allowed_fields_and_the_whole_form_sent_back_are_accepted(operator):
    result = graph.invoke({"question": IN_CORPUS}, context={"answer_threshold": 0.0, "multihop": "never"})
    assert result["verdict"] == "correct" and cites_the_volga(result["citations"])
    form = {f: getattr(Context(), f) for f in field_names()}  # Studio may send every field at its value
    assert graph.invoke({"question": IN_CORPUS}, context=form)["answer"] == result["answer"]


def test_the_operator_sets_everything_through_a_context_of_its_own(operator, indexes):
    _, other = indexes
    result = graph.invoke({"question": "What is the vault code?"},
                          context=context(other, operator={"grade": {"upper": -1.0, "lower": -1.0}}))
    assert "4711" in result["answer"]


def test_budgets_are_capped_at_the_operators_value(operator, monkeypatch):
    monkeypatch.setenv("CRAGRAPH_MAX_RETRIEVAL_ROUNDS", "2")
    use_operator(grade={"upper": 1.0, "lower": 1.0})
    for too_many in (3, 10**9):
        with pytest.raises(SettingRefused, match=rf"max_retrieval_rounds={too_many} .above the server's limit 2"):
            graph.invoke({"question": OFF_CORPUS}, context={"max_retrieval_rounds": too_many})
    lowered = graph.invoke({"question": OFF_CORPUS}, context={"max_retrieval_rounds": 0})
    assert [e["node"] for e in lowered["trace"]].count("retrieve") == 1
    capped = graph.invoke({"question": OFF_CORPUS}, context={})
    assert [e["node"] for e in capped["trace"]].count("retrieve") == 3  # the operator's 2 re-retrievals


def test_the_allow_list_is_the_operators_to_widen_or_narrow(operator, indexes, monkeypatch):
    _, other = indexes
    monkeypatch.setenv(ALLOW_ENV, "*")
    assert graph.invoke({"question": IN_CORPUS}, context={"index": str(other)})["verdict"] == "incorrect"
    monkeypatch.setenv(ALLOW_ENV, "default,-answer_threshold")
    with pytest.raises(SettingRefused, match="answer_threshold"):
        graph.invoke({"question": IN_CORPUS}, context={"answer_threshold": 0.1})
    monkeypatch.setenv(ALLOW_ENV, "")
    with pytest.raises(SettingRefused, match="multihop"):
        client_context({"multihop": "never"})
    monkeypatch.setenv(ALLOW_ENV, "default,indx")
    with pytest.raises(ValueError, match="unknown Context field 'indx'"):
        client_context({})


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ({"max_retrieval_rounds": "lots"}, TypeError,
         "Context.max_retrieval_rounds must be an integer, not 'lots' (str)"),
        ({"answer_threshold": "high"}, TypeError, "Context.answer_threshold must be a number"),
        ({"answer_threshold": float("nan")}, ValueError, "Context.answer_threshold must be a finite number"),
        ({"highlight": "yes"}, TypeError, "Context.highlight must be a bool"),
        ({"rerank_k": 3}, UnknownSetting, "rerank_k is an operator setting now: set it in cragraph.toml"),
        ({"multihop": 3}, ValueError, "Context.multihop must be one of"),
        ({"bogus": 1}, ValueError, "unknown Context fields: 'bogus'"),
    ],
)
def test_a_clients_wrong_types_are_refused_with_the_field_named(operator, values, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        client_context(values)


def test_a_wrong_type_reaching_a_node_is_refused_before_it_crashes(operator, indexes):
    served, _ = indexes
    bad = context(served)
    bad.max_retrieval_rounds = "lots"  # type: ignore[assignment]  # an operator's typo in Python
    with pytest.raises(TypeError, match="Context.max_retrieval_rounds must be an integer"):
        graph.invoke({"question": IN_CORPUS}, context=bad)
    with pytest.raises(TypeError, match="Context.max_retrieval_rounds must be an integer"):
        graph.invoke({"question": IN_CORPUS}, context={"max_retrieval_rounds": "lots"})


def test_every_field_is_classified_and_the_dangerous_ones_are_the_operators():
    assert client_defaults() | OPERATOR_ONLY == set(field_names())
    for name in ("index", "index_backend", "index_uri", "evaluator", "chat_model", "latency_budget_ms", "debug"):
        assert name in OPERATOR_ONLY and name not in allowed_fields(None), name
    assert BUDGETS == {"max_retrieval_rounds", "web_search"} <= client_defaults()
    assert {"answer_threshold", "multihop", "strategy", "llm_answer", "review"} <= client_defaults()
    assert graph.context_schema is ClientContext  # what LangGraph builds a server run's dict context with


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"question": 42}, "the question must be a string, not 42 (int)"),
        ({"question": None}, "no question: give"),
        ({}, "no question: give"),
        ({"question": ["a"]}, "the question must be a string"),
        ({"question": "a\udfffb"}, "the question has an invalid character at 1 (a lone surrogate)"),
        ({"question": " \n\t"}, "the question is empty"),
        ({"question": "Volga?", "filters": "language=en"}, "filters must be an object"),
        ({"question": "Volga?", "filters": ["language"]}, "filters must be an object"),
        ({"question": "Volga?", "recommend_only": "yes"}, "recommend_only must be true or false"),
    ],
)
def test_a_wrong_input_is_refused_at_the_first_node_with_a_clear_error(operator, request_, message):
    with pytest.raises(ValueError) as refused:
        graph.invoke(request_, context={})
    assert message in str(refused.value) and type(refused.value) is ValueError


def test_a_clients_explicit_default_wins_over_the_env_only_where_allowed(operator):
    default = Context.__dataclass_fields__["answer_threshold"].default
    assert Context().answer_threshold == 0.0 and Context(answer_threshold=default).answer_threshold == 0.0  # env
    assert client_context({"answer_threshold": default}).answer_threshold == default  # asked for: it gets it
    assert client_context({}).answer_threshold == 0.0
    form_index = client_context({"index": ".cragraph/index"}).index  # an operator field left at its default
    assert form_index == operator.index


def test_the_operators_env_values_are_checked_too(operator, monkeypatch):
    monkeypatch.setenv("CRAGRAPH_MAX_RETRIEVAL_ROUNDS", "-3")
    with pytest.raises(ValueError, match="Context.max_retrieval_rounds must be >= 0, not -3"):
        graph.invoke({"question": IN_CORPUS})  # no context: defaults and env
    with pytest.raises(ValueError, match="Context.max_retrieval_rounds must be >= 0, not -3"):
        graph.invoke({"question": IN_CORPUS}, context={"multihop": "never"})
