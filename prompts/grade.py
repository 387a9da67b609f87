"""Prompt for the LLM relevance grader: one passage, one question, a graded JSON verdict."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from prompts.data import quote_passages

GRADE_SYSTEM = """You grade whether a retrieved passage helps answer a question.
The question may be in English, Russian or Chinese; the passage may be in any of them too. Judge meaning, not \
shared words.

Grades:
0 = irrelevant: the passage does not help answer the question.
1 = partly relevant: the passage is on the topic or gives part of the needed facts, but not the answer.
2 = relevant: the passage states the answer or the key fact needed for it.

Reply with strict JSON only, no other text: {"relevance": 0} or {"relevance": 1} or {"relevance": 2}"""

GRADE_USER = """Question: {question}

Passage:
{passage}

JSON:"""


def grade_messages(question: str, passage: str) -> list[BaseMessage]:
    """Messages asking for the graded relevance of `passage` to `question`."""
    quoted = quote_passages([(None, "", passage)])
    return [
        SystemMessage(content=GRADE_SYSTEM + "\n" + quoted.rule),
        HumanMessage(content=GRADE_USER.format(question=question.strip(), passage=quoted.blocks)),
    ]
