"""Calling a chat model for structured output: strict JSON checked by a pydantic model, or nothing.

A reply that is not valid JSON, or JSON of the wrong shape, returns an error string instead of a value; the
caller then takes its rule-based path and writes the error into its trace record.
"""

from __future__ import annotations

import json
import re
from typing import TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ValidationError

from cragraph.models.chat import load_chat_model, message_text

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


def ask_structured(
    spec: str, messages: list[BaseMessage], schema: type[Parsed], max_new_tokens: int | None = None
) -> tuple[Parsed | None, str | None]:
    """(value, None) when the model answered with valid JSON for `schema`, else (None, why not)."""
    try:
        model = load_chat_model(spec)
        kwargs = (
            {"max_new_tokens": max_new_tokens} if max_new_tokens and spec in ("embedded", "smollm2") else {}
        )
        reply = message_text(model.invoke(messages, **kwargs))
    except Exception as error:  # a missing provider package, a network error, a context overflow
        return None, f"chat model {spec!r} failed: {type(error).__name__}: {str(error)[:160]}"
    try:
        return schema.model_validate(extract_json(reply)), None
    except (ValueError, ValidationError) as error:
        first_line = str(error).splitlines()[0][:120]
        return None, f"invalid LLM output ({first_line}): {reply[:80]!r}"
