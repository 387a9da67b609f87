"""What a client may set (issue 14): a run's dict context is checked against the operator's allow-list before
any node runs; the operator (CRAGRAPH_* env, a Context built in Python) still sets everything."""

from __future__ import annotations

import dataclasses

import pytest

from cragraph.context import Context
from cragraph.policy import (
    ALLOW_ENV,
    ClientContext,
    SettingRefused,
    allowed_fields,
    budgets,
    client_context,
    client_defaults,
    field_names,
    operator_only,
)
from graph import graph
from tests.fixtures.graph import build_tiny_index, cites_the_volga, context, use_keyword_evaluator
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
    with TavilyStub([WEB_RESULT]) as stub, pytest.raises(SettingRefused, match="web_base_url .an operator setting"):
        graph.invoke({"question": OFF_CORPUS}, context={"web_base_url": stub.url})
    assert stub.requests == []  # no request, so no `Authorization: Bearer <key>` left the server


@pytest.mark.parametrize("field", ["index", "evaluator", "cross_encoder", "chat_model", "reader_path", "embedder"])
def test_a_client_cannot_choose_folders_or_models(operator, indexes, field):
    _, other = indexes
    for value in (str(other), "../other/index", f"cross-encoder:{other}"):
        with pytest.raises(SettingRefused) as refused:
            graph.invoke({"question": IN_CORPUS}, context={field: value})
        assert f"{field} (an operator setting)" in str(refused.value)
        assert "Unrecognized model" not in str(refused.value) and str(other) not in str(refused.value)


def test_allowed_fields_and_the_whole_form_sent_back_are_accepted(operator):
    result = graph.invoke({"question": IN_CORPUS}, context={"upper": 0.4, "multihop": "never"})
    assert result["verdict"] == "correct" and cites_the_volga(result["citations"])
    form = {f: getattr(Context(), f) for f in field_names()}  # Studio may send every field at its value
    assert graph.invoke({"question": IN_CORPUS}, context=form)["answer"] == result["answer"]


def test_the_operator_sets_everything_through_a_context_of_its_own(operator, indexes):
    _, other = indexes
    result = graph.invoke({"question": "What is the vault code?"}, context=context(other, upper=-1.0, lower=-1.0))
    assert "4711" in result["answer"]


def test_budgets_are_capped_at_the_operators_value_even_when_allowed(operator, monkeypatch):
    monkeypatch.setenv("CRAGRAPH_MAX_RETRIEVAL_ROUNDS", "2")
    with pytest.raises(SettingRefused, match="max_retrieval_rounds .an operator setting"):
        graph.invoke({"question": OFF_CORPUS}, context={"max_retrieval_rounds": 0})
    monkeypatch.setenv(ALLOW_ENV, "default,max_retrieval_rounds")
    for too_many in (3, 10**9):
        with pytest.raises(SettingRefused, match=rf"max_retrieval_rounds={too_many} .above the server's limit 2"):
            graph.invoke(
                {"question": OFF_CORPUS}, context={"max_retrieval_rounds": too_many, "upper": 1.0, "lower": 1.0}
            )
    lowered = graph.invoke({"question": OFF_CORPUS}, context={"max_retrieval_rounds": 0, "upper": 1.0, "lower": 1.0})
    assert [e["node"] for e in lowered["trace"]].count("retrieve") == 1 and lowered["abstained"]
    capped = graph.invoke({"question": OFF_CORPUS}, context={"upper": 1.0, "lower": 1.0})
    assert [e["node"] for e in capped["trace"]].count("retrieve") == 3  # the operator's 2 re-retrievals


def test_the_allow_list_is_the_operators_to_widen_or_narrow(operator, indexes, monkeypatch):
    _, other = indexes
    monkeypatch.setenv(ALLOW_ENV, "*")
    assert graph.invoke({"question": IN_CORPUS}, context={"index": str(other)})["verdict"] == "incorrect"
    monkeypatch.setenv(ALLOW_ENV, "default,-upper")
    with pytest.raises(SettingRefused, match="upper"):
        graph.invoke({"question": IN_CORPUS}, context={"upper": 0.1})
    monkeypatch.setenv(ALLOW_ENV, "")
    with pytest.raises(SettingRefused, match="multihop"):
        client_context({"multihop": "never"})
    monkeypatch.setenv(ALLOW_ENV, "default,indx")
    with pytest.raises(ValueError, match="unknown Context field 'indx'"):
        client_context({})


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ({"rerank_k": "lots"}, TypeError, "Context.rerank_k must be an integer, not 'lots' (str)"),
        ({"upper": "high"}, TypeError, "Context.upper must be a number"),
        ({"upper": float("nan")}, ValueError, "Context.upper must be a finite number"),
        ({"rerank": "yes"}, TypeError, "Context.rerank must be a bool"),
        ({"class_alphas": {"who": "x"}}, TypeError, "class_alphas must map names to finite numbers"),
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
    bad.rerank_k = "lots"  # type: ignore[assignment]  # an operator's typo in Python
    with pytest.raises(TypeError, match="Context.rerank_k must be an integer"):
        graph.invoke({"question": IN_CORPUS}, context=bad)
    with pytest.raises(TypeError, match="Context.rerank_k must be an integer"):
        graph.invoke({"question": IN_CORPUS}, context={"rerank_k": "lots"})


def test_every_field_is_classified_and_the_dangerous_ones_are_the_operators():
    assert client_defaults() | operator_only() == set(field_names())
    for name in (
        "index",
        "embedder",
        "evaluator",
        "cross_encoder",
        "chat_model",
        "answer_model",
        "reader_path",
        "web_base_url",
        "web_search",
        "max_retrieval_rounds",
        "retrieve_k",
        "retrieval_pool",
        "context_budget_chars",
        "answer_max_new_tokens",
        "multihop_max_sub_questions",
        "multihop_bridge_template",
        "debug",
    ):
        assert name in operator_only() and name not in allowed_fields(None), name
    assert {"max_retrieval_rounds", "web_max_results", "web_timeout_s"} <= budgets()
    assert {"upper", "lower", "multihop", "strategy", "prf", "llm_answer"} <= client_defaults()
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
    default = Context.__dataclass_fields__["lower"].default
    assert Context().lower == -0.6 and Context(lower=default).lower == -0.6  # a plain Context: the env replaces it
    assert client_context({"lower": default}).lower == default  # the client asked for the default: it gets it
    assert client_context({}).lower == -0.6
    form_index = client_context({"index": ".cragraph/index"}).index  # an operator field left at its default
    assert form_index == operator.index


def test_the_operators_env_values_are_checked_too(operator, monkeypatch):
    monkeypatch.setenv("CRAGRAPH_RERANK_K", "-3")
    with pytest.raises(ValueError, match="Context.rerank_k must be >= 0, not -3"):
        graph.invoke({"question": IN_CORPUS})  # no context: defaults and env
    with pytest.raises(ValueError, match="Context.rerank_k must be >= 0, not -3"):
        graph.invoke({"question": IN_CORPUS}, context={"upper": 0.4})
