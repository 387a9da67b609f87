"""Prompt for the optional LLM plan compiler: a validated decomposition -> CompiledPlan JSON."""

from __future__ import annotations

import json

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

COMPILE_SYSTEM = """You turn a validated list of sub-questions into an execution plan (strict JSON only).
Fields: "question"; "sub_questions": [{{"id", "query" (the sub-question text, with {{slot}} placeholders),
"slots_in" (the placeholders it uses), "top_k" (passages to retrieve, 1-{max_top_k}), "extract_slot" (the slot
it produces or null), "candidates" (1-3 answer candidates to try)}}] in dependency order;
"question_top_k"; "hit_sources" (which retrievals become evidence: "question" and sub-question ids);
"merge" ("union" or "intersect"); "max_evidence" (1-{max_evidence}).
Example: {example}"""

COMPILE_USER = """Question: {question}
Sub-questions: {decomposition}
JSON:"""

EXAMPLE = {
    "question": "Who founded the label that released Thriller?",
    "sub_questions": [
        {
            "id": "q1",
            "query": "Which label released Thriller?",
            "slots_in": [],
            "top_k": 8,
            "extract_slot": "label",
            "candidates": 2,
        },
        {
            "id": "q2",
            "query": "Who founded {label}?",
            "slots_in": ["label"],
            "top_k": 8,
            "extract_slot": None,
            "candidates": 1,
        },
    ],
    "question_top_k": 10,
    "hit_sources": ["question", "q1", "q2"],
    "merge": "union",
    "max_evidence": 10,
}


def compile_messages(
    question: str, decomposition: dict, max_top_k: int = 20, max_evidence: int = 20
) -> list[BaseMessage]:
    return [
        SystemMessage(
            content=COMPILE_SYSTEM.format(
                max_top_k=max_top_k, max_evidence=max_evidence, example=json.dumps(EXAMPLE)
            )
        ),
        HumanMessage(
            content=COMPILE_USER.format(
                question=question.strip(), decomposition=json.dumps(decomposition, ensure_ascii=False)
            )
        ),
    ]
