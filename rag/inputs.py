"""What a run of the graph accepts, checked where the run enters (graph/entry.py) before LangGraph or LangChain
read it. Their own errors ("Expected dict, got 42", a pydantic ValidationError on a message's content, "Unsupported
message type") name neither the field nor what would work, and a server returns them inside an HTTP 200. Each
refusal here is a ValueError (a server returns its message) that says what is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.types import Command

from rag.context import Context
from rag.settings import shown

ACCEPTED = ('a run takes {"question": "...", "filters"?: {...}, "recommend_only"?: true|false} or a chat\'s '
            '{"messages": [{"role": "user", "content": "..."}, ...]}')
ROLES = ("user", "human", "assistant", "ai", "system")  # what a chat sends; this graph calls no tools


def check_input(value: Any, resumable: bool) -> None:
    """Refuse a run's input unless it is a dict of the accepted shape, a Command (a resumed review), or None
    on a thread (`resumable`: go on from its checkpoint)."""
    if isinstance(value, Command) or (value is None and resumable):
        return
    if not isinstance(value, Mapping):
        raise ValueError(f"{ACCEPTED}; got {shown(value)}")
    if "messages" in value:
        check_messages(value["messages"])


def check_messages(messages: Any) -> None:
    """`messages`: a list of messages (one message alone is taken as a list of one), each a string (a user's
    text), a LangChain message, or {"role" (or "type"): user|assistant|system, "content": text or a list of
    text blocks}."""
    items = messages if isinstance(messages, list | tuple) else [messages]
    if messages is None or not isinstance(messages, list | tuple | str | Mapping | BaseMessage):
        raise ValueError(f'"messages" must be a list of messages such as {{"role": "user", "content": "..."}}, '
                         f"not {shown(messages)}")
    for position, item in enumerate(items):
        problem = _message_problem(item)
        if problem:
            raise ValueError(f"messages[{position}]: {problem}; a message is {{\"role\": one of "
                             f"{', '.join(ROLES)}, \"content\": \"text\"}} or a string")


def _message_problem(item: Any) -> str | None:
    if isinstance(item, str | BaseMessage):
        return None
    if not isinstance(item, Mapping):
        return f"not a message: {shown(item)}"
    role = item.get("role", item.get("type"))
    if role not in ROLES:
        return f"role {shown(role)} is not accepted"
    content = item.get("content")
    if isinstance(content, str):
        return None
    if isinstance(content, list) and all(
        isinstance(block, str) or (isinstance(block, Mapping) and isinstance(block.get("type"), str))
        for block in content
    ):
        return None
    return f"content must be text or a list of text blocks, not {shown(content)}"


def check_context(context: Any) -> None:
    """A run's context is a Context (the operator's, built in Python), an object of Context fields (a client's),
    or absent; anything else (5, "fast", []) is refused rather than read as no context or crashing a node."""
    if context is None or isinstance(context, Context | Mapping):
        return
    raise ValueError(f'context must be a Context or an object of Context fields such as {{"multihop": "never"}}, '
                     f"not {shown(context)}")
