"""Prompt for the optional LLM follow-up rewrite (nodes/conversation.py): a thread's last question, standalone."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

FOLLOWUP_SYSTEM = """You rewrite the last question of a conversation so that it can be understood without the
conversation: replace pronouns ("he", "it", "его", "他") and elliptical phrases ("and the population?", "what about
Moscow?") with the names they refer to in the earlier turns. Keep the question's language and meaning; add nothing
else. A question that is already standalone is returned unchanged.
Reply with strict JSON only: {"question": "..."}"""

MAX_TURNS = 3  # earlier turns shown to the model
MAX_ANSWER_CHARS = 300


class StandaloneQuestion(BaseModel):
    question: str = Field(min_length=1, max_length=500)


def followup_messages(question: str, turns: list[tuple[str, str]]) -> list[BaseMessage]:
    """`turns`: the earlier (question, answer) pairs, oldest first."""
    lines = []
    for asked, answered in turns[-MAX_TURNS:]:
        lines += [f"User: {asked.strip()}", f"Assistant: {answered.strip()[:MAX_ANSWER_CHARS]}"]
    conversation = "\n".join(lines)
    return [
        SystemMessage(content=FOLLOWUP_SYSTEM),
        HumanMessage(content=f"Conversation:\n{conversation}\n\nLast question: {question.strip()}\nJSON:"),
    ]
