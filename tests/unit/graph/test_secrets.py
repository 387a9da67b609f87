"""Secrets (issue 14): with sentinel API keys in the environment, no key reaches a result, the trace, a
checkpoint (thread state), a log record, an exception or the CLI's text and --json output, whether the web
search works (the Tavily stand-in), fails, or talks to a hostile endpoint that echoes the key it was sent."""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread
from typing import Any
from urllib.parse import quote

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from cragraph.cli.main import main
from cragraph_lab.web_standin import WebStandin
from graph.builder import build_graph
from rag.config import operator_config
from rag.retrieval.web import WebSearchClient, WebSearchError
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator

SENTINELS = {
    "TAVILY_API_KEY": "tvly-SENTINEL-tavily-4f1c9e",
    "OPENAI_API_KEY": "sk-SENTINEL-openai-9a2b77",
    "ANTHROPIC_API_KEY": "SENTINEL-anthropic-31d0",
    "MY_SERVICE_API_KEY": "SENTINEL-custom-c0ffee",
}
QUESTION = "What is the population of Tokyo Japan?"
WEB_CORPUS = [
    {"id": "tokyo", "title": "Tokyo", "text": "The population of Tokyo, the capital of Japan, is about 14 million."},
    {"id": "osaka", "title": "Osaka", "text": "Osaka is a port city in Japan on Osaka Bay."},
    {"id": "kyoto", "title": "Kyoto", "text": "Kyoto was the capital of Japan for over a thousand years."},
]


def leaked(*texts: Any) -> list[str]:
    blob = "\n".join(t if isinstance(t, str) else json.dumps(t, default=str, ensure_ascii=False) for t in texts)
    return [name for name, value in SENTINELS.items() if value in blob or value[-6:] in blob]


class Echo:
    """A hostile Tavily endpoint: answers `status` with a body that repeats every header and the body it got."""

    def __init__(self, status: int, shape: str = "detail"):
        echo = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
                seen = f"headers {dict(self.headers)} body {body}"
                if echo.shape == "results":
                    payload: Any = {"results": [{"url": "https://e.org", "title": seen, "content": f"Tokyo {seen}"}]}
                elif echo.shape == "url":  # the key only in the result's URL (its id), the text plain
                    key = quote(str(self.headers.get("Authorization")).removeprefix("Bearer "))
                    payload = {"results": [{"url": f"https://e.org/tokyo?k={key}", "title": "Tokyo",
                                            "content": "The population of Tokyo, Japan, is about 14 million."}]}
                elif echo.shape == "garbage":
                    payload = None
                else:
                    payload = {"detail": {"error": seen}}
                data = (seen if payload is None else json.dumps(payload)).encode()
                self.send_response(echo.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.status, self.shape = status, shape
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Echo:
        Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("secrets-index"), tiny_embedder_dir)


@pytest.fixture(autouse=True)
def sentinels(monkeypatch, caplog):
    use_keyword_evaluator(monkeypatch)
    for name, value in SENTINELS.items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.DEBUG)


def run_checkpointed(index, base_url: str) -> tuple[dict, list]:
    checkpointed = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": base_url}}
    settings = context(index, web_search=True, max_retrieval_rounds=1, debug=True,
                       operator={"web": {"base_url": base_url}})
    result = checkpointed.invoke({"question": QUESTION}, config, context=settings)
    history = [snapshot.values for snapshot in checkpointed.get_state_history(config)]
    return result, history


def test_the_web_stand_in_run_answers_and_nothing_carries_a_key(index, caplog):
    with WebStandin(WEB_CORPUS, api_key=SENTINELS["TAVILY_API_KEY"]) as web:
        result, history = run_checkpointed(index, web.url)
    assert "14 million" in result["answer"] and result["citations"][0]["source"] == "web"
    assert not leaked(result, history, caplog.text)


@pytest.mark.parametrize(
    ("status", "shape"),
    [
        (401, "detail"),
        (403, "detail"),
        (429, "detail"),
        (400, "detail"),
        (500, "detail"),
        (200, "garbage"),
        (200, "results"),
        (200, "url"),
    ],
)
def test_a_hostile_endpoint_echoing_the_key_gets_it_nowhere(index, caplog, status, shape):
    with Echo(status, shape) as echo:
        result, history = run_checkpointed(index, echo.url)
        with pytest.raises(WebSearchError) if shape not in ("results", "url") else _no_error() as raised:
            WebSearchClient(base_url=echo.url, timeout_s=5).search("Tokyo")
    web = next(e for e in result["trace"] if e["node"] == "web_search")
    assert web["decision"].startswith("failed:") or shape in ("results", "url"), web
    error_texts = [str(raised.value), repr(raised.value), str(raised.value.__cause__)] if raised else []
    assert not leaked(result, history, caplog.text, error_texts), (web, error_texts)


class _no_error:  # noqa: N801 (reads like pytest.raises)
    value = None

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


def ask_cli(index, web_url: str, *extra: str, **operator: dict) -> int:
    """`cragraph ask` over the tiny index with the operator's web branch pointed at `web_url`."""
    with operator_config(web={"base_url": web_url}, **operator):
        return main(["ask", QUESTION, "--index", str(index), "--evaluator", "cosine", "--web", *extra])


THRESHOLDS = {"grade": {"lower": -0.6, "upper": 0.5}}


def test_a_failing_web_endpoint_and_the_cli_print_no_key(index, capsys, caplog, tmp_path):
    with WebStandin(WEB_CORPUS, api_key=SENTINELS["TAVILY_API_KEY"]) as web:
        for extra in (["--json"], ["--trace"], ["--json", "--trace"]):
            code = ask_cli(index, web.url, *extra, "--set", "answer_threshold=0", **THRESHOLDS)
            out = capsys.readouterr()
            assert code == 0 and "standin.local" in out.out, out  # answered from the web stand-in
            assert not leaked(out.out, out.err)
    with Echo(401) as echo:
        code = ask_cli(index, echo.url, "--json", "--trace")
        out = capsys.readouterr()
    assert code == 0 and "failed:auth" in out.out
    assert not leaked(out.out, out.err, caplog.text)


def test_a_key_echoed_into_a_result_url_is_redacted_from_citations_history_and_the_cli(index, capsys, caplog):
    with Echo(200, "url") as echo:
        result, history = run_checkpointed(index, echo.url)
        code = ask_cli(index, echo.url, "--set", "answer_threshold=0", **THRESHOLDS)
        out = capsys.readouterr()
    cited = [c for c in result["citations"] if c["source"] == "web"]
    assert cited and cited[0]["url"].startswith("https://e.org/tokyo?k="), result["citations"]  # the web result is used
    assert code == 0 and "e.org/tokyo" in out.out, out
    assert not leaked(result, history, out.out, out.err, caplog.text)
