"""Prompt for the grounded answer: numbered context passages in, strict JSON with citations out."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from prompts.data import quote_passages
from prompts.languages import language_name

ANSWER_SYSTEM = """You answer a question using ONLY the numbered context passages below.
Rules:
- Use only facts stated in the passages. Do not use outside knowledge.
- Cite the passages you used with their numbers in square brackets, e.g. [1] or [2].
- Answer in {language}, the language of the question, in one or two sentences.
- If the passages do not contain the answer, set "answerable" to false.
Reply with strict JSON only:
{{"answerable": true, "answer": "short answer with citations [1]", "citations": [1],
 "evidence": ["a sentence copied exactly from a cited passage"]}}"""

ANSWER_USER = """Context:
{context}

Question: {question}
JSON:"""


def answer_messages(question: str, language: str, passages: Sequence[tuple[int, str, str]]) -> list[BaseMessage]:
    """`passages` are (number, title, text) in citation order, each in a delimited data block; the system
    message says the blocks hold data, not instructions."""
    quoted = quote_passages(passages)
    return [
        SystemMessage(content=ANSWER_SYSTEM.format(language=language_name(language)) + "\n" + quoted.rule),
        HumanMessage(content=ANSWER_USER.format(context=quoted.blocks, question=question.strip())),
    ]


class AnswerReply(BaseModel):
    answerable: bool
    answer: str = ""
    citations: list[int] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
