"""web_search against the stand-in Tavily server: results with URL provenance, every failure in the trace."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from nodes.web_search import web_search
from rag.retrieval.web import WebSearchClient, WebSearchError
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator
from tests.fixtures.tavily_stub import TavilyStub

RESULTS = [
    {
        "url": "https://example.org/tokyo",
        "title": "Tokyo",
        "score": 0.9,
        "content": "Tokyo has a population of about 14 million. It is the capital of Japan. "
        "Sushi is popular.",
    },
    {"url": "https://example.org/empty", "title": "Empty", "content": "", "score": 0.5},
]
STATE = {"question": "What is the population of Tokyo?", "keywords": "population Tokyo", "language": "en"}


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("web-index"), tiny_embedder_dir)


@pytest.fixture(autouse=True)
def _setup(monkeypatch):
    use_keyword_evaluator(monkeypatch)
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")


def test_results_become_refined_passages_with_url_provenance(index):
    with TavilyStub(RESULTS) as stub:
        ctx = context(index, web_search=True,
                      operator={"web": {"base_url": stub.url, "max_results": 3}, "strips": {"min_chars": 10}})
        update = web_search(STATE, Runtime(context=ctx))
    assert update["web_status"] == "ok"
    (passage,) = update["web_knowledge"]  # the result without content is skipped
    assert passage["id"] == passage["url"] == "https://example.org/tokyo" and passage["source"] == "web"
    assert passage["text"] == RESULTS[0]["content"] and len(passage["strips"]) == 3  # refined like index passages
    best = max(passage["strips"], key=lambda s: s["score"])
    assert best["text"] == "Tokyo has a population of about 14 million."
    assert stub.requests[0]["json"]["query"] == "population Tokyo"
    assert stub.requests[0]["json"]["max_results"] == 3
    assert stub.requests[0]["path"] == "/search"


@pytest.mark.parametrize(
    ("mode", "kind"), [("401", "auth"), ("429", "rate_limit"), ("500", "server"), ("garbage", "bad_response")]
)
def test_http_failures_are_recorded_not_raised(index, mode, kind):
    with TavilyStub(RESULTS, mode=mode) as stub:
        update = web_search(STATE, Runtime(context=context(index, web_search=True,
                                                           operator={"web": {"base_url": stub.url}})))
    assert update["web_status"] == f"failed:{kind}" and update["web_knowledge"] == []
    assert update["trace"][0]["decision"] == f"failed:{kind}"


def test_a_hanging_server_times_out(index):
    with TavilyStub(RESULTS, mode="hang", hang_s=3) as stub:
        ctx = context(index, web_search=True, operator={"web": {"base_url": stub.url, "timeout_s": 0.3}})
        update = web_search(STATE, Runtime(context=ctx))
    assert update["web_status"] == "failed:timeout"
    assert update["trace"][0]["duration_ms"] < 2500


def test_unreachable_server_no_key_and_switched_off(index, monkeypatch):
    update = web_search(
        STATE, Runtime(context=context(index, web_search=True, operator={"web": {"base_url": "http://127.0.0.1:9"}}))
    )
    assert update["web_status"] == "failed:network"
    assert web_search(STATE, Runtime(context=context(index, web_search=False)))["web_status"] == "off"
    monkeypatch.delenv("TAVILY_API_KEY")
    assert web_search(STATE, Runtime(context=context(index, web_search=True)))["web_status"] == "unavailable"
    with pytest.raises(WebSearchError) as error:
        WebSearchClient().search("x")
    assert error.value.kind == "no_key"


def test_invalid_llm_web_query_falls_back_to_keywords(index, monkeypatch):
    import models.structured
    from models.scripted import ScriptedChatModel

    monkeypatch.setattr(models.structured, "load_chat_model",
                        lambda spec: ScriptedChatModel(responses=["{oops"]))
    with TavilyStub(RESULTS) as stub:
        ctx = context(index, web_search=True, operator={"web": {"base_url": stub.url, "llm_query": True}})
        update = web_search(STATE, Runtime(context=ctx))
    assert stub.requests[0]["json"]["query"] == "population Tokyo"
    assert "keyword query used" in update["trace"][0]["note"]
