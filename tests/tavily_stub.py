"""A stand-in Tavily HTTP server on 127.0.0.1 for tests: canned results, or a chosen failure.

Modes: "ok" (200 with `results`), "401", "429", "500", "hang" (sleeps `hang_s` before answering), "garbage"
(200 with a non-JSON body). Every request is recorded (path, JSON body, Authorization header).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class TavilyStub:
    def __init__(self, results: list[dict[str, Any]] | None = None, mode: str = "ok", hang_s: float = 5.0):
        self.results = results or []
        self.mode = mode
        self.hang_s = hang_s
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8") if length else ""
                stub.requests.append(
                    {
                        "path": self.path,
                        "json": json.loads(body) if body else None,
                        "authorization": self.headers.get("Authorization"),
                    }
                )
                if stub.mode == "hang":
                    time.sleep(stub.hang_s)
                if stub.mode in ("401", "429", "500"):
                    payload = {"detail": {"error": f"stub status {stub.mode}"}}
                    return self._reply(int(stub.mode), json.dumps(payload))
                if stub.mode == "garbage":
                    return self._reply(200, "<html>not json</html>")
                query = (stub.requests[-1]["json"] or {}).get("query", "")
                max_results = (stub.requests[-1]["json"] or {}).get("max_results") or len(stub.results)
                payload = {"query": query, "results": stub.results[:max_results], "response_time": 0.01}
                return self._reply(200, json.dumps(payload))

            def _reply(self, status: int, body: str) -> None:
                data = body.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> TavilyStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
