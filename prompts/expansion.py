"""Prompts for the gated query expansions: Query2Doc's pseudo document and HyDE's hypothetical passage."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from prompts.languages import language_name

QUERY2DOC_SYSTEM = """Write a short encyclopedia-style passage (3-4 sentences) that answers the question.
Write in {language}. Use the names, dates and terms a relevant document would contain. No preamble."""

HYDE_SYSTEM = """Write one paragraph (2-3 sentences) from a document that would contain the answer to the
question. Write in {language}. State the answer as a fact, with its names and numbers. No preamble."""

EXPANSION_USER = """Question: {question}
Passage:"""

_SYSTEM = {"query2doc": QUERY2DOC_SYSTEM, "hyde": HYDE_SYSTEM}


def expansion_messages(kind: str, question: str, language: str) -> list[BaseMessage]:
    """Messages asking for the pseudo document of `kind` ('query2doc' or 'hyde') for `question`."""
    if kind not in _SYSTEM:
        raise ValueError(f"unknown expansion {kind!r}; expected query2doc or hyde")
    return [
        SystemMessage(content=_SYSTEM[kind].format(language=language_name(language))),
        HumanMessage(content=EXPANSION_USER.format(question=question.strip())),
    ]
