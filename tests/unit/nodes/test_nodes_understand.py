"""understand, route and rewrite: language, rule-based variants, cosine-filtered LLM rewrites, the route's tiers,
invalid LLM JSON."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

import models.structured
from models.scripted import ScriptedChatModel
from nodes._runtime import bundle_of
from nodes.rewrite import negative_feedback_query, rewrite
from nodes.route import route
from nodes.understand import understand
from rag.knowledge.vectors import query_vector
from rag.retrieval.multi_query import keyword_form
from tests.fixtures.graph import build_tiny_index, context


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("understand-index"), tiny_embedder_dir)


def scripted(monkeypatch, *responses):
    model = ScriptedChatModel(responses=list(responses))
    monkeypatch.setattr(models.structured, "load_chat_model", lambda spec: model)
    return model


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Which river flows into the Caspian Sea?", "en"),
        ("За что Лев Ландау получил Нобелевскую премию?", "ru"),
        ("中央研究院的首任院长是谁？", "zh"),
    ],
)
def test_language_route_budget_and_keyword_variant(index, question, language):
    runtime = Runtime(context=context(index, max_retrieval_rounds=3))
    update = understand({"question": question}, runtime)
    assert update["language"] == language
    assert update["retrieval_round"] == 0 and update["max_retrieval_rounds"] == 3
    assert update["trace"][0]["node"] == "understand"
    routed = route({"question": question, **update}, runtime)
    assert routed["route"] == "single" and routed["strategy"]["name"] == "manual"
    assert routed["trace"][0]["node"] == "route" and "(pattern)" in routed["trace"][0]["decision"]


def test_keyword_form_drops_stopwords_and_question_words():
    assert keyword_form("Which river flows into the Caspian Sea?") == "river flows Caspian Sea"
    assert (
        keyword_form("За что Лев Ландау получил Нобелевскую премию?")
        == "Лев Ландау получил Нобелевскую премию"
    )


def test_llm_rewrites_are_kept_only_above_the_cosine_threshold(index, monkeypatch):
    question = "Which river flows into the Caspian Sea?"
    close, far = "Which river flows into the Caspian Sea", "Tower Bridge London"
    embedder = bundle_of(context(index)).embedder
    q = query_vector(embedder, question)
    cos_close, cos_far = (embedder.embed_queries([close, far]) @ q).tolist()
    assert cos_close > cos_far
    model = scripted(monkeypatch, f'```json\n{{"queries": ["{close}", "{far}"]}}\n```')
    ctx = context(index,
                  operator={"understand": {"llm_rewrites": True, "rewrite_min_cosine": (cos_close + cos_far) / 2}})
    update = understand({"question": question}, Runtime(context=ctx))
    assert close in update["variants"] and far not in update["variants"]
    assert "dropped 1" in update["trace"][0]["note"]
    assert question in model.prompts[0]


@pytest.mark.parametrize(
    "reply", ["sure! here are rewrites: a, b", '{"queries": "not a list"}', '{"queries": []}']
)
def test_invalid_llm_json_falls_back_to_rule_based_variants(index, monkeypatch, reply):
    scripted(monkeypatch, reply)
    update = understand(
        {"question": "Which river flows into the Caspian Sea?"},
        Runtime(context=context(index, operator={"understand": {"llm_rewrites": True}})),
    )
    assert update["variants"] == ["river flows Caspian Sea"]
    assert "rule-based variants only" in update["trace"][0]["note"]


def test_rewrite_counts_rounds_and_uses_negative_feedback(index):
    rejected = [
        {"title": "Thames", "text": "The Thames flows through London."},
        {"title": "Volga", "text": "The Volga flows into the Caspian Sea."},
    ]
    assert negative_feedback_query("Which river flows through Tokyo?", rejected) == "river tokyo"
    state = {
        "question": "Which river flows through Tokyo?",
        "candidates": rejected,
        "retrieval_round": 1,
        "max_retrieval_rounds": 3,
        "variants": ["x"],
    }
    update = rewrite(state, Runtime(context=context(index)))
    assert update["retrieval_round"] == 2 and update["query"] == "river tokyo" and update["variants"] == []


def test_rewrite_with_invalid_llm_output_uses_the_rule(index, monkeypatch):
    scripted(monkeypatch, "not json")
    state = {"question": "Which river flows through Tokyo?", "candidates": [], "retrieval_round": 0}
    update = rewrite(state, Runtime(context=context(index, operator={"understand": {"llm_rewrites": True}})))
    assert update["query"] == "river flows Tokyo"
    assert "rule-based rewrite" in update["trace"][0]["note"]


def test_llm_route_classifier_decides_and_falls_back_on_invalid_output(monkeypatch, index):
    replies = ScriptedChatModel(responses=['{"route": "multihop"}', "probably multi-hop?"])
    monkeypatch.setattr(models.structured, "load_chat_model", lambda spec: replies)
    runtime = Runtime(context=context(index, operator={"route": {"llm": True}}))
    first = route({"question": "What is the capital of France?"}, runtime)
    assert first["route"] == "multihop" and "LLM route: multihop" in first["trace"][0]["note"]
    assert "(LLM)" in first["trace"][0]["decision"]
    second = route({"question": "What is the capital of France?"}, runtime)
    assert second["route"] == "single" and "invalid LLM output" in second["trace"][0]["note"]


def test_a_re_retrieval_round_escalates_the_strategy_one_step(index):
    runtime = Runtime(context=context(index))
    state = {"question": "Which river flows through Tokyo?", "retrieval_round": 1, "strategy": {"name": "graph"}}
    update = route(state, runtime)
    assert update["strategy"]["name"] == "comprehensive" and "route" not in update
    assert update["trace"][0]["decision"] == "round 1: escalated graph -> comprehensive"
    last = route({**state, "strategy": {"name": "full_document"}}, runtime)
    assert "strategy" not in last and "end of the escalation chain" in last["trace"][0]["decision"]
