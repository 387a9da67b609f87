"""Prompt for the optional LLM route classifier (understand): single-hop or multi-hop question."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

ROUTE_SYSTEM = """You decide how a question must be searched in a document collection.
"single": one passage can answer it. "multihop": it needs a first fact to find a second one (for example "the
county where X is located", "the drummer of the band that released Y") or compares two entities.
The question may be in English, Russian or Chinese.
Reply with strict JSON only: {"route": "single"} or {"route": "multihop"}"""


def route_messages(question: str) -> list[BaseMessage]:
    return [SystemMessage(content=ROUTE_SYSTEM), HumanMessage(content=f"Question: {question.strip()}\nJSON:")]


class RouteChoice(BaseModel):
    route: Literal["single", "multihop"]
