"""cragraph_lab/web_standin.py: a Tavily-compatible server over its own corpus, searched through the real client
(tavily-python), its error replies, and the graph's web branch answering from it or surviving its absence."""

from __future__ import annotations

import json

import pytest
import requests

from cragraph_lab.web_standin import WebStandin, is_loopback_host, load_corpus
from graph import graph
from rag.retrieval.web import WebSearchClient, WebSearchError
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator

KEY = "standin-key"
CORPUS = [
    {"id": "tokyo", "title": "Tokyo population",
     "text": "The population of Tokyo, the capital of Japan, is about 14 million people.",
     "url": "https://example.org/tokyo"},
    {"id": "osaka", "title": "Osaka", "text": "Osaka is a large port city in western Japan."},
    {"id": "kyoto", "title": "Kyoto", "text": "Kyoto was the imperial capital of Japan for a thousand years."},
    {"id": "nile", "title": "Nile", "text": "The Nile flows north into the Mediterranean Sea."},
    {"id": "everest", "title": "Mount Everest", "text": "Everest is the highest mountain above sea level."},
    {"id": "berlin", "title": "Berlin", "text": "Berlin is the capital and largest city of Germany."},
    {"id": "amazon", "title": "Amazon", "text": "The Amazon river carries more water than any other river."},
    {"id": "sahara", "title": "Sahara", "text": "The Sahara is the largest hot desert in the world."},
    {"id": "a/b c", "title": "Odd id", "text": "A record whose id needs quoting in its stand-in address."},
]
OFF_CORPUS = "What is the population of Tokyo Japan?"


@pytest.fixture(scope="module")
def standin():
    with WebStandin(CORPUS, api_key=KEY) as server:
        yield server


def post(standin, body, key=KEY, raw=None):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    data = raw if raw is not None else json.dumps(body)
    return requests.post(f"{standin.url}/search", data=data, headers=headers, timeout=5)


# ---------------------------------------------------------------------------------- through tavily-python


def test_the_real_client_gets_the_answering_passage_first(standin):
    results = WebSearchClient(api_key=KEY, base_url=standin.url).search("population of Tokyo", max_results=5)
    assert results, "the stand-in returned nothing"
    first = results[0]
    assert first.url == "https://example.org/tokyo"
    assert first.title == "Tokyo population"
    assert first.content == CORPUS[0]["text"]
    assert first.score == 1.0  # normalized by the top score
    assert all(0.0 < r.score <= first.score for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


def test_max_results_is_honoured_and_urls_default_to_standin_local(standin):
    client = WebSearchClient(api_key=KEY, base_url=standin.url)
    query = "Japan sea city river"
    everything = client.search(query, max_results=10)
    assert len(everything) >= 4, [r.url for r in everything]
    two = client.search(query, max_results=2)
    assert [r.url for r in two] == [r.url for r in everything[:2]]
    assert len(client.search(query, max_results=1)) == 1
    assert "https://standin.local/osaka" in {r.url for r in everything}
    odd = client.search("record quoting address", max_results=1)
    assert odd[0].url == "https://standin.local/a%2Fb%20c"


def test_a_wrong_or_missing_key_is_refused_as_auth(standin):
    with pytest.raises(WebSearchError) as refused:
        WebSearchClient(api_key="not-the-key", base_url=standin.url).search("Tokyo")
    assert refused.value.kind == "auth"
    missing = post(standin, {"query": "Tokyo"}, key=None)
    assert missing.status_code == 401 and "error" in missing.json()["detail"]
    assert post(standin, {"query": "Tokyo", "api_key": KEY}, key=None).status_code == 200  # the older body key


def test_a_server_without_a_key_accepts_any():
    with WebStandin(CORPUS) as open_server:
        results = WebSearchClient(api_key="anything", base_url=open_server.url).search("Sahara desert")
    assert results[0].url == "https://standin.local/sahara"


# ------------------------------------------------------------------------------------ the wire format


def test_the_reply_has_tavilys_shape(standin):
    reply = post(standin, {"query": "Everest mountain", "max_results": 3, "search_depth": "advanced",
                           "include_answer": True, "include_images": True, "topic": "general"})
    assert reply.status_code == 200 and reply.headers["Content-Type"] == "application/json"
    body = reply.json()
    assert set(body) == {"query", "follow_up_questions", "answer", "images", "results", "response_time",
                         "request_id"}
    assert body["query"] == "Everest mountain" and body["answer"] is None and body["images"] == []
    assert body["follow_up_questions"] is None and isinstance(body["response_time"], float)
    assert body["results"][0] == {"title": "Mount Everest", "url": "https://standin.local/everest",
                                  "content": CORPUS[4]["text"], "score": 1.0, "raw_content": None}
    assert len(body["results"]) <= 3
    default = post(standin, {"query": "Japan sea city river capital"}).json()["results"]
    assert len(default) == 5  # Tavily's default max_results
    raw = post(standin, {"query": "Everest", "include_raw_content": True}).json()["results"][0]
    assert raw["raw_content"] == CORPUS[4]["text"]
    assert post(standin, {"query": "zzzunknownterm"}).json()["results"] == []


@pytest.mark.parametrize(("raw", "body"), [
    ("{not json", None),
    (b"\xff\xfe", None),
    (None, {"query": ""}),
    (None, {"query": "   "}),
    (None, {"max_results": 3}),
    (None, {"query": 42}),
    (None, {"query": "Tokyo", "max_results": "many"}),
    (None, ["query", "Tokyo"]),
])
def test_bad_requests_get_400_with_a_json_error_and_the_server_keeps_serving(standin, raw, body):
    reply = post(standin, body, raw=raw)
    assert reply.status_code == 400, reply.text
    assert isinstance(reply.json()["detail"]["error"], str) and reply.json()["detail"]["error"]
    assert post(standin, {"query": "Tokyo"}).status_code == 200


def test_unknown_paths_and_methods(standin):
    assert requests.post(f"{standin.url}/extract", json={"query": "x"}, timeout=5).status_code == 404
    missing = requests.get(f"{standin.url}/", timeout=5)
    assert missing.status_code == 404 and "error" in missing.json()["detail"]
    assert requests.get(f"{standin.url}/search", timeout=5).status_code == 405
    assert post(standin, {"query": "Tokyo"}).status_code == 200


def test_an_oversized_body_is_refused_without_reading_it(standin):
    reply = post(standin, None, raw=json.dumps({"query": "x" * (2 << 20)}))
    assert reply.status_code == 413


def test_only_loopback_hosts_and_clean_corpora(tmp_path):
    assert is_loopback_host("127.0.0.1") and is_loopback_host("127.5.0.1") and is_loopback_host("::1")
    assert is_loopback_host("localhost") and not is_loopback_host("0.0.0.0")
    assert not is_loopback_host("192.168.1.5") and not is_loopback_host("example.org")
    with pytest.raises(ValueError, match="loopback"):
        WebStandin(CORPUS, host="0.0.0.0")
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in CORPUS[:3]) + "\n\n", encoding="utf-8")
    assert [r["id"] for r in load_corpus(path)] == ["tokyo", "osaka", "kyoto"]
    assert load_corpus(tmp_path)[0]["url"] == "https://example.org/tokyo"  # a dataset folder
    with pytest.raises(ValueError, match="duplicate id"):
        load_corpus([CORPUS[0], CORPUS[0]])
    with pytest.raises(ValueError, match="no text"):
        load_corpus([{"id": "x", "title": "X"}])
    with pytest.raises(ValueError, match="empty"):
        load_corpus([])
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "text": "ok"}\n{oops\n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        load_corpus(tmp_path / "bad.jsonl")
    with pytest.raises(FileNotFoundError):
        load_corpus(tmp_path / "missing.jsonl")


def test_ipv6_loopback_serves():
    try:
        server = WebStandin(CORPUS, host="::1")
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    with server:
        assert server.url.startswith("http://[::1]:")
        assert WebSearchClient(api_key=KEY, base_url=server.url).search("Sahara")[0].title == "Sahara"


# ------------------------------------------------------------------------------ the graph's web branch


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("standin-index"), tiny_embedder_dir)


def test_the_graph_answers_an_off_corpus_question_from_the_standin(index, standin, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    served = standin.requests_served
    result = graph.invoke({"question": OFF_CORPUS},
                          context=context(index, web_search=True, operator={"web": {"base_url": standin.url}}))
    assert standin.requests_served > served
    web = next(e for e in result["trace"] if e["node"] == "web_search")
    assert web["decision"].startswith("ok"), web
    assert result["verdict"] == "incorrect" and not result["abstained"]
    assert result["citations"] and all(c["source"] == "web" for c in result["citations"])
    assert result["citations"][0]["url"] == "https://example.org/tokyo"
    assert "14 million" in result["answer"]


def test_a_standin_that_is_down_is_a_failed_web_search_and_the_run_finishes(index, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    with WebStandin(CORPUS[:3]) as gone:
        url = gone.url
    with pytest.raises(WebSearchError) as down:  # the port is closed now
        WebSearchClient(api_key=KEY, base_url=url, timeout_s=2).search("Tokyo")
    assert down.value.kind == "network"
    result = graph.invoke({"question": OFF_CORPUS},
                          context=context(index, web_search=True, max_retrieval_rounds=1, answer_threshold=0.5,
                                          operator={"web": {"base_url": url, "timeout_s": 2.0}}))
    web = [e for e in result["trace"] if e["node"] == "web_search"]
    assert len(web) == 1 and web[0]["decision"] == "failed:network", web
    assert "ConnectionError" in web[0]["note"] and f"port={gone.port}" in web[0]["note"]
    assert result["abstained"] and result["citations"] == []
    assert result["trace"][-1]["node"] == "answer"
