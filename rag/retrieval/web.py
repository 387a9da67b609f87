"""Web search through Tavily (tavily-python), with every failure turned into one typed error.

The agent must never crash because the web is down: callers catch `WebSearchError` and read its `kind`
("no_key", "timeout", "auth", "rate_limit", "bad_request", "server", "network", "bad_response"). `base_url`
points the client at another endpoint (a proxy, or the stand-in server the tests run on 127.0.0.1).
"""

from __future__ import annotations

import ipaddress
import math
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import requests

from rag.retrieval.sanitize import clean_title, drop_instructions, redact_secrets, safe_url, strip_markup

API_KEY_ENV = "TAVILY_API_KEY"
BASE_URL_ENV = "TAVILY_BASE_URL"
DEADLINE_SLACK_S = 0.5  # past the web timeout before a whole call counts as hung


class WebSearchError(Exception):
    """A failed search; its message never carries the remote body or a key (it reaches the trace)."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {redact_secrets(message)}")
        self.kind = kind


@dataclass
class WebResult:
    url: str
    title: str
    content: str
    score: float
    instructions_dropped: int = 0  # sentences addressed to a model, removed from the content


class WebSearchClient:
    """One Tavily client per (key, base URL); `search` returns results or raises WebSearchError."""

    def __init__(self, api_key: str | None = None, base_url: str | None = None, timeout_s: float = 10.0):
        self.api_key = api_key or os.environ.get(API_KEY_ENV) or None
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or "").rstrip("/") or None
        self.timeout_s = timeout_s

    @property
    def available(self) -> bool:
        return bool(self.api_key)

    def search(self, query: str, max_results: int = 5, search_depth: str = "basic") -> list[WebResult]:
        from tavily import TavilyClient
        from tavily import errors as tavily_errors

        if not self.api_key:
            raise WebSearchError("no_key", f"no Tavily API key ({API_KEY_ENV} is not set)")
        session = requests.Session()
        session.trust_env = not _is_loopback(self.base_url)  # no proxy between us and a local endpoint
        client = TavilyClient(api_key=self.api_key, api_base_url=self.base_url, session=session)
        try:
            reply = _within(self.timeout_s, lambda: client.search(
                query, max_results=max_results, search_depth=search_depth, timeout=self.timeout_s))
        except tavily_errors.TimeoutError as error:
            raise WebSearchError("timeout", f"no answer within {self.timeout_s:g} s") from error
        # tavily's own errors carry the remote body (which a hostile endpoint can fill with anything, the key
        # it was sent included): only the status goes on, and the cause is dropped with it.
        except tavily_errors.InvalidAPIKeyError:
            raise WebSearchError("auth", "HTTP 401, the API key was refused") from None
        except tavily_errors.ForbiddenError:
            raise WebSearchError("auth", "HTTP 403 forbidden") from None
        except tavily_errors.UsageLimitExceededError:
            raise WebSearchError("rate_limit", "HTTP 429 usage limit") from None
        except tavily_errors.BadRequestError:
            raise WebSearchError("bad_request", "HTTP 400 bad request") from None
        except requests.HTTPError as error:
            status = error.response.status_code if error.response is not None else "?"
            raise WebSearchError("server", f"HTTP {status}") from error
        except (requests.Timeout, TimeoutError) as error:
            raise WebSearchError("timeout", f"no answer within {self.timeout_s:g} s") from error
        except ValueError as error:  # a 200 whose body is not JSON (requests' JSONDecodeError too)
            raise WebSearchError("bad_response", f"unreadable reply ({str(error)[:120]})") from None  # .doc: the body
        except requests.RequestException as error:  # requests' own words (host, port), never the remote body
            raise WebSearchError("network", f"{type(error).__name__}: {str(error)[:160]}") from error
        finally:
            client.close()
        return parse_results(reply, secrets=(self.api_key,))


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """call() bounded as a whole: requests' timeout bounds each read, so an endpoint that drips a byte now and
    then would hold the run for as long as it likes. The call runs on a daemon thread; past the deadline the run
    goes on with a timeout error and the thread ends when the connection does."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as error:  # handed to the caller's except clauses below
            box["error"] = error

    worker = threading.Thread(target=run, name="web-search", daemon=True)
    worker.start()
    worker.join(seconds + DEADLINE_SLACK_S)
    if worker.is_alive():
        raise TimeoutError(f"no complete answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def parse_results(reply: Any, secrets: Iterable[str | None] = ()) -> list[WebResult]:
    """Results with an http(s) URL and some text, in the order Tavily ranked them. Web text is data: markup
    is stripped from content and title, instruction-like sentences are dropped (and counted), and a result
    whose URL is not http(s) (`javascript:`, `data:`) is dropped. Known secrets (the environment's, and
    `secrets`: the key this client sent) are redacted from every field, the URL too, since it becomes the
    passage's id, a citation and a line of the CLI's output."""
    if not isinstance(reply, dict) or not isinstance(reply.get("results"), list):
        raise WebSearchError("bad_response", "the reply has no 'results' list")
    results = []
    for item in reply["results"]:
        if not isinstance(item, dict):
            continue
        url = safe_url(redact_secrets(str(item.get("url") or ""), secrets))
        content, dropped = drop_instructions(strip_markup(redact_secrets(str(item.get("content") or ""), secrets)))
        if url and content:
            results.append(
                WebResult(
                    url=url,
                    title=clean_title(redact_secrets(str(item.get("title") or ""), secrets)),
                    content=content,
                    score=_score(item.get("score")),
                    instructions_dropped=dropped,
                )
            )
    return results


def _score(value: Any) -> float:
    """Tavily's relevance score; anything not a finite number counts as 0."""
    try:
        score = float(value or 0.0)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer too large for a float (10**400)
        return 0.0
    return score if math.isfinite(score) else 0.0


def _is_loopback(url: str | None) -> bool:
    host = urlparse(url).hostname if url else None
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
