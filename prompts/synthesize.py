"""Prompt for SYNTHESIZE: the final answer of a multi-hop plan, only from the evidence it gathered."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from prompts.data import quote_passages

SYNTHESIZE_SYSTEM = """Answer the question using only the numbered evidence passages. The question may need
facts from several passages combined. Keep the answer short. If the evidence does not answer it, answer null.
Reply with strict JSON only: {"answer": "short answer"} or {"answer": null}"""

SYNTHESIZE_USER = """Evidence:
{passages}

Question: {question}
JSON:"""


def synthesize_messages(question: str, passages: Sequence[str], max_chars: int = 500) -> list[BaseMessage]:
    quoted = quote_passages([(i, "", p[:max_chars]) for i, p in enumerate(passages, start=1)])
    return [
        SystemMessage(content=SYNTHESIZE_SYSTEM + "\n" + quoted.rule),
        HumanMessage(content=SYNTHESIZE_USER.format(passages=quoted.blocks, question=question.strip())),
    ]
