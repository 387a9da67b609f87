"""Prompt for EXTRACT_ANSWER: a short value (a name, a place, a date) answering a sub-question."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from prompts.data import quote_passages

EXTRACT_SYSTEM = """You read numbered passages and answer the question with a short value copied from them:
a name, a title, a place, a date or a number, at most 8 words. If the passages do not contain it, answer null.
Reply with strict JSON only: {"answer": "value"} or {"answer": null}"""

EXTRACT_USER = """Passages:
{passages}

Question: {question}
JSON:"""


def extract_answer_messages(question: str, passages: Sequence[str], max_chars: int = 600) -> list[BaseMessage]:
    quoted = quote_passages([(i, "", p[:max_chars]) for i, p in enumerate(passages, start=1)])
    return [
        SystemMessage(content=EXTRACT_SYSTEM + "\n" + quoted.rule),
        HumanMessage(content=EXTRACT_USER.format(passages=quoted.blocks, question=question.strip())),
    ]


class ShortAnswer(BaseModel):
    answer: str | None = None
