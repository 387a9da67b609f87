"""Prompt that turns a question into one web search query."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from prompts.languages import language_name

WEB_QUERY_SYSTEM = """You turn a question into one short web search query (at most 12 words).
Keep every name, date and number. Write it in {language}, the language of the question.
Reply with strict JSON only: {{"query": "the search query"}}"""


def web_query_messages(question: str, language: str) -> list[BaseMessage]:
    return [
        SystemMessage(content=WEB_QUERY_SYSTEM.format(language=language_name(language))),
        HumanMessage(content=f"Question: {question.strip()}\nJSON:"),
    ]


class WebQuery(BaseModel):
    query: str = Field(min_length=2, max_length=300)
