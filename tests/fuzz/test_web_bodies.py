"""Web replies over real HTTP on loopback (issue 14): a 10 MB JSON body, a 10 MB HTML body, and a body that
drips in slowly. Documented outcomes: results, or WebSearchError; a slow drip must end within the client's
time budget, not hang the run."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rag.retrieval.web import WebSearchClient, WebSearchError
from tests.fuzz.conftest import tally

BIG_JSON = json.dumps(
    {
        "results": [
            {
                "url": "https://example.org/paris",
                "title": "Paris",
                "content": "Paris is the capital of France. " * 330_000,
                "score": 0.9,
            }
        ]
    }
)
BIG_HTML = "<html><body>" + "<div><p>not json</p></div>" * 400_000 + "</body></html>"
DRIP = json.dumps({"results": [{"url": "https://example.org", "content": "Slow text.", "score": 0.5}]})


class _Server:
    """Answers POST /search with `body`, sending `chunk` bytes every `pause` seconds."""

    def __init__(self) -> None:
        self.body, self.chunk, self.pause, self.content_type = b"", 1 << 20, 0.0, "application/json"
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", server.content_type)
                self.send_header("Content-Length", str(len(server.body)))
                self.end_headers()
                try:
                    for start in range(0, len(server.body), server.chunk):
                        self.wfile.write(server.body[start : start + server.chunk])
                        self.wfile.flush()
                        time.sleep(server.pause)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should on a drip

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    stand_in = _Server()
    yield stand_in
    stand_in.http.shutdown()


def test_a_10_mb_json_body_is_parsed_and_bounded(server: _Server) -> None:
    server.body, server.chunk, server.pause = BIG_JSON.encode(), 1 << 20, 0.0
    tally("web-http", cases=1)
    (result,) = WebSearchClient(api_key="tvly-test", base_url=server.url, timeout_s=20).search("capital of France")
    assert result.url == "https://example.org/paris" and len(result.content) < 1_000_000


def test_a_10_mb_html_body_is_a_clear_error(server: _Server) -> None:
    server.body, server.chunk, server.pause, server.content_type = BIG_HTML.encode(), 1 << 20, 0.0, "text/html"
    tally("web-http", cases=1)
    try:
        with pytest.raises(WebSearchError, match="bad_response"):
            WebSearchClient(api_key="tvly-test", base_url=server.url, timeout_s=20).search("capital of France")
    finally:
        server.content_type = "application/json"


def test_a_slow_drip_ends_within_the_time_budget(server: _Server) -> None:
    server.body, server.chunk, server.pause = DRIP.encode(), 4, 0.25  # ~25 chunks: ~6 s in all
    tally("web-http", cases=1)
    started = time.monotonic()
    try:
        results = WebSearchClient(api_key="tvly-test", base_url=server.url, timeout_s=1.0).search("slow")
    except WebSearchError as error:
        assert error.kind in ("timeout", "network", "bad_response")
        results = None
    elapsed = time.monotonic() - started
    assert elapsed < 3.0, f"a 1 s budget took {elapsed:.1f} s ({'answered' if results else 'no answer'})"
