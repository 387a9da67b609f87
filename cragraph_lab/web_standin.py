"""A small Tavily-compatible search server over a corpus of its own: the web branch's offline stand-in.

Benchmarks remove a question's gold passages from the index and put them here, so the question becomes
answerable only through the web branch, which talks to this server exactly as it talks to Tavily
(tavily-python with `api_base_url`). Passages are ranked by the project's BM25 over `titled(title, text)`,
BM25Okapi's idf included: in a corpus of a handful of passages a term found in half of them or more scores
nothing, so give it more than a few (a benchmark's removed gold passages, or those plus distractors).

The wire format is Tavily's `POST /search`:
  request  JSON body {"query": str, "max_results": int = 5, ...}; every other Tavily field (search_depth,
           topic, include_answer, include_images, include_domains, ...) is accepted and ignored, except
           `include_raw_content`, which fills `raw_content` with the passage text. The key comes as
           `Authorization: Bearer <key>` (what tavily-python >= 0.5 sends) or as `api_key` in the body (what
           older clients sent).
  reply    200 {"query", "follow_up_questions": null, "answer": null, "images": [], "results": [{"title",
           "url", "content", "score", "raw_content"}], "response_time", "request_id"}, best first; `score` is
           the BM25 score over the top one's (in (0, 1]); `url` is the record's or https://standin.local/<id>.
  errors   {"detail": {"error": message}} (the body tavily-python reads): 400 bad JSON / no query / bad
           max_results, 401 missing or wrong key (only when the server has one), 404 unknown path, 405 wrong
           method, 413 a body over 1 MiB (read away up to 16 MiB first), 500 anything unexpected. No request is logged.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from stores.bm25 import BM25Index
from stores.types import titled

DEFAULT_MAX_RESULTS = 5
MAX_RESULTS_LIMIT = 20  # Tavily's own ceiling
MAX_BODY_BYTES = 1 << 20
MAX_DRAINED_BYTES = 16 << 20  # a larger body is not read before the 413: the connection is just closed
MAX_QUERY_CHARS = 2000
URL_PREFIX = "https://standin.local/"


def is_loopback_host(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: the only addresses the stand-in listens on."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def load_corpus(source: list[dict[str, Any]] | str | os.PathLike[str]) -> list[dict[str, str]]:
    """Records {id, title, text, url} from a list, a JSONL file, or a dataset folder holding corpus.jsonl."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            path = path / "corpus.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"no corpus file at {path} (expected JSONL: one {{id, title, text}} a line)")
        rows: Iterable[tuple[str, Any]] = _jsonl_rows(path)
    else:
        rows = ((f"record {n}", row) for n, row in enumerate(source, start=1))
    records: list[dict[str, str]] = []
    seen: set[str] = set()
    for where, row in rows:
        if not isinstance(row, dict):
            raise ValueError(f"{where}: a corpus record must be a JSON object, got {type(row).__name__}")
        if row.get("id") is None or str(row["id"]).strip() == "":
            raise ValueError(f"{where}: the record has no id")
        doc_id = str(row["id"]).strip()
        if doc_id in seen:
            raise ValueError(f"{where}: duplicate id {doc_id!r}")
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}: record {doc_id!r} has no text")
        seen.add(doc_id)
        url = str(row.get("url") or "").strip() or URL_PREFIX + quote(doc_id, safe="")
        records.append({"id": doc_id, "title": str(row.get("title") or "").strip(), "text": text.strip(),
                        "url": url})
    if not records:
        raise ValueError("the corpus is empty")
    return records


def _jsonl_rows(path: Path) -> Iterable[tuple[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield f"{path}:{number}", json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from error


class _RequestError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that hung up mid-reply is not worth a traceback


class _Server6(_Server):
    address_family = socket.AF_INET6


class WebStandin:
    """The stand-in server: `with WebStandin(corpus) as web: WebSearchClient(key, base_url=web.url)`."""

    def __init__(
        self,
        corpus: list[dict[str, Any]] | str | os.PathLike[str],
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
    ) -> None:
        if not is_loopback_host(host):
            raise ValueError(f"the web stand-in listens on loopback addresses only (127.0.0.0/8, ::1, "
                             f"localhost), not {host!r}")
        if not 0 <= int(port) <= 65535:
            raise ValueError(f"port {port} is out of range (0-65535; 0 picks a free one)")
        self.records = load_corpus(corpus)
        self.api_key = api_key or None
        self.index = BM25Index()
        self.index.add(list(range(len(self.records))),
                       [titled(r["title"], r["text"]) for r in self.records])
        self.requests_served = 0
        self._count_lock = threading.Lock()
        bind = host.strip("[]")
        server_class = _Server6 if ":" in bind else _Server
        self.server = server_class((bind, int(port)), self._handler_class())
        self._host = bind
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}"

    # ------------------------------------------------------------------------------------------ search

    def search(self, query: str, max_results: int = DEFAULT_MAX_RESULTS,
               include_raw_content: bool = False) -> list[dict[str, Any]]:
        """Tavily-shaped results for `query`, best first, scores normalized by the top one."""
        ids, scores = self.index.search(query, max_results)
        if not len(ids):
            return []
        top = float(scores[0])
        results = []
        for doc, score in zip(ids.tolist(), scores.tolist(), strict=True):
            record = self.records[doc]
            results.append({
                "title": record["title"],
                "url": record["url"],
                "content": record["text"],
                "score": round(min(1.0, max(0.0, score / top)), 6),
                "raw_content": record["text"] if include_raw_content else None,
            })
        return results

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The whole Tavily reply for a parsed request body (raises _RequestError for a bad one)."""
        started = time.perf_counter()
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _RequestError(400, "query is missing or empty")
        if len(query) > MAX_QUERY_CHARS:
            raise _RequestError(400, f"query is longer than {MAX_QUERY_CHARS} characters")
        max_results = body.get("max_results")
        if max_results is None:
            max_results = DEFAULT_MAX_RESULTS
        if isinstance(max_results, bool) or not isinstance(max_results, int):
            raise _RequestError(400, f"max_results must be an integer, got {max_results!r}")
        max_results = min(max(max_results, 0), MAX_RESULTS_LIMIT)
        results = self.search(query, max_results, include_raw_content=bool(body.get("include_raw_content")))
        return {
            "query": query,
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": results,
            "response_time": round(time.perf_counter() - started, 4),
            "request_id": str(uuid.uuid4()),
        }

    def _authorized(self, header: str | None, body: Any) -> bool:
        if self.api_key is None:
            return True
        presented = None
        if header and header.lower().startswith("bearer "):
            presented = header[7:].strip()
        elif isinstance(body, dict) and isinstance(body.get("api_key"), str):
            presented = body["api_key"]
        return presented is not None and hmac.compare_digest(presented.encode(), self.api_key.encode())

    # ------------------------------------------------------------------------------------------- HTTP

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "cragraph-web-standin"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self._handle("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._handle("GET")

            def do_PUT(self) -> None:  # noqa: N802
                self._handle("PUT")

            def do_DELETE(self) -> None:  # noqa: N802
                self._handle("DELETE")

            def _handle(self, method: str) -> None:
                try:
                    status, payload = self._respond(method)
                except _RequestError as error:
                    status, payload = error.status, {"detail": {"error": error.message}}
                except Exception as error:  # never let bad input take the server down
                    status, payload = 500, {"detail": {"error": f"internal error: {type(error).__name__}"}}
                with standin._count_lock:
                    standin.requests_served += 1
                self._reply(status, payload)

            def _respond(self, method: str) -> tuple[int, dict[str, Any]]:
                path = urlsplit(self.path).path.rstrip("/")
                if path != "/search":
                    raise _RequestError(404, f"no such endpoint: {urlsplit(self.path).path} (POST /search)")
                if method != "POST":
                    raise _RequestError(405, f"{method} is not allowed on /search; POST a JSON body")
                body = self._read_json()
                if not standin._authorized(self.headers.get("Authorization"), body):
                    raise _RequestError(401, "Unauthorized: missing or invalid API key.")
                if isinstance(body, _RequestError):
                    raise body
                if not isinstance(body, dict):
                    raise _RequestError(400, "the request body must be a JSON object")
                return 200, standin.answer(body)

            def _read_json(self) -> Any:
                """The parsed body, or a _RequestError to raise after the key check (401 comes first)."""
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    self.close_connection = True
                    raise _RequestError(400, "bad Content-Length") from None
                if length < 0:
                    self.close_connection = True
                    raise _RequestError(400, "bad Content-Length")
                if length > MAX_BODY_BYTES:
                    self.close_connection = True
                    if length <= MAX_DRAINED_BYTES:  # read it away, so the client sees the 413, not a reset
                        while length > 0:
                            chunk = self.rfile.read(min(length, 1 << 16))
                            if not chunk:
                                break
                            length -= len(chunk)
                    raise _RequestError(413, f"the body is over {MAX_BODY_BYTES} bytes")
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as error:
                    return _RequestError(400, f"the body is not valid JSON ({error})")

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                send_json(self, status, json.dumps(payload, ensure_ascii=False).encode("utf-8"))

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
                return

        return Handler

    # ------------------------------------------------------------------------------------- lifecycle

    def start(self) -> WebStandin:
        """Serve from a daemon thread (what `with` does)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.server.serve_forever, name="web-standin", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self.server.server_close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (the CLI); the socket is closed on the way out."""
        try:
            self.server.serve_forever()
        finally:
            self.server.server_close()

    def __enter__(self) -> WebStandin:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def send_json(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
    """Write one JSON reply; a client that already gave up (a timeout) is not an error of ours."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
