"""Prompt for query rewrites (understand) and for the re-retrieval rewrite after an `incorrect` grade."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from prompts.languages import language_name

REWRITE_SYSTEM = """You rewrite a question into search queries for a document search engine.
Write {count} different queries that keep the question's meaning and its names, dates and numbers exactly.
Write them in {language}, the language of the question. No explanations.
Reply with strict JSON only: {{"queries": ["first query", "second query"]}}"""

REWRITE_USER = """Question: {question}
{avoid}
JSON:"""


def rewrite_messages(
    question: str, language: str, count: int, avoid: list[str] | None = None
) -> list[BaseMessage]:
    """Messages asking for `count` search queries for `question`; `avoid` lists queries that failed."""
    tried = (
        "Queries already tried without success (write different ones): " + "; ".join(avoid) if avoid else ""
    )
    return [
        SystemMessage(content=REWRITE_SYSTEM.format(count=count, language=language_name(language))),
        HumanMessage(content=REWRITE_USER.format(question=question.strip(), avoid=tried)),
    ]


class Rewrites(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=10)
