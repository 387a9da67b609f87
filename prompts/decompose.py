"""Prompt for decomposing a question into a DAG of sub-questions with slot variables (multihop decompose)."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from prompts.languages import language_name

DECOMPOSE_SYSTEM = """You split a question into the simpler questions a search engine must answer, in order.
Rules:
- 1 to {max_nodes} sub-questions, each with an id ("q1", "q2", ...) and its text in {language}.
- "deps" lists the ids a sub-question needs answered first (at most {max_deps}).
- A sub-question whose answer is needed later gets a "slot" name; later sub-questions write it as {{name}}
  and must list the producer in "deps". Define each slot once and use it at least once.
- "merge" is "intersect" only when the answer must satisfy every sub-question at once, else "union".
Reply with strict JSON only, no explanations. Example for "Who founded the label that released Thriller?":
{{"sub_questions": [{{"id": "q1", "text": "Which label released Thriller?", "deps": [], "slot": "label"}},
 {{"id": "q2", "text": "Who founded {{label}}?", "deps": ["q1"]}}], "merge": "union"}}"""

DECOMPOSE_USER = """Question: {question}
{errors}JSON:"""


def decompose_messages(
    question: str,
    language: str,
    max_nodes: int = 5,
    max_deps: int = 2,
    errors: list[str] | None = None,
    previous: str | None = None,
) -> list[BaseMessage]:
    """Messages asking for a decomposition; a retry passes the previous reply and the validator's errors."""
    feedback = ""
    if errors:
        feedback = (
            f"Your previous plan was rejected:\n{previous or ''}\nErrors:\n- "
            + "\n- ".join(errors)
            + "\nWrite a corrected plan.\n"
        )
    return [
        SystemMessage(
            content=DECOMPOSE_SYSTEM.format(
                max_nodes=max_nodes, max_deps=max_deps, language=language_name(language)
            )
        ),
        HumanMessage(content=DECOMPOSE_USER.format(question=question.strip(), errors=feedback)),
    ]
