"""Calling a chat model for structured output: strict JSON checked by a pydantic model, or nothing.

A reply that is not valid JSON, or JSON of the wrong shape, returns an error string instead of a value; the
caller then takes its rule-based path and writes the error into its trace record.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ValidationError

from models.chat import load_chat_model, message_text

Parsed = TypeVar("Parsed", bound=BaseModel)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)\s*```", re.DOTALL)


def extract_json(reply: str) -> object:
    """The JSON value of a reply: bare, inside one ``` fence, or the first {...} object in the text.

    Raises ValueError (json.JSONDecodeError included) when there is none."""
    text = reply.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    try:
        return _loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise
        return _loads(text[start : end + 1])


def _loads(text: str) -> object:
    """json.loads with its one undocumented failure, RecursionError on deeply nested input ("[" * 100_000 from a
    model stuck in a loop), turned into the ValueError every caller handles."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_log = logging.getLogger("cragraph.models")
_WARNED: set[tuple[str, str]] = set()
_LOCK = threading.Lock()


def warn_unusable(spec: str, error: BaseException) -> None:
    """Say on stderr (the log), once per model and kind of failure, that a chat model cannot be used and how to
    fix it. Every LLM stage falls back to its rule-based path, so without this a missing package, key or server
    would only show as weaker answers and a note in each trace."""
    key = (spec, type(error).__name__)
    with _LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    text = " ".join(str(error).split())[:300]
    lowered = text.lower()
    if isinstance(error, ImportError):
        fix = "install the package named above"
    elif "api_key" in lowered or "api key" in lowered or "401" in lowered or "unauthorized" in lowered:
        fix = "set the provider's API key in the environment (e.g. OPENAI_API_KEY)"
    elif "connect" in lowered or "refused" in lowered or "timed out" in lowered or "timeout" in lowered:
        fix = "start the model's server or check its address (e.g. `ollama serve`)"
    else:
        fix = "check the spec (provider:model) or choose another with --chat-model / CRAGRAPH_CHAT_MODEL"
    _log.warning(
        "chat model %r cannot be used (%s: %s); the LLM stages fall back to their rule-based paths (the "
        "reader's answer). Fix: %s, or use the embedded model (--chat-model embedded).",
        spec, type(error).__name__, text, fix,
    )


def ask_structured(
    spec: str, messages: list[BaseMessage], schema: type[Parsed], max_new_tokens: int | None = None
) -> tuple[Parsed | None, str | None]:
    """(value, None) when the model answered with valid JSON for `schema`, else (None, why not)."""
    try:
        model = load_chat_model(spec)
        kwargs: dict[str, Any] = (
            {"max_new_tokens": max_new_tokens} if max_new_tokens and spec in ("embedded", "smollm2") else {}
        )
        reply = message_text(model.invoke(messages, **kwargs))
    except Exception as error:  # a missing provider package, a network error, a context overflow
        warn_unusable(spec, error)
        return None, f"chat model {spec!r} failed: {type(error).__name__}: {str(error)[:160]}"
    try:
        return schema.model_validate(extract_json(reply)), None
    except (ValueError, ValidationError) as error:
        first_line = str(error).splitlines()[0][:120]
        return None, f"invalid LLM output ({first_line}): {reply[:80]!r}"
