"""rewrite: a new query for one more retrieval round, when grading said `incorrect` and the web cannot help.

With `llm_rewrites` on, the chat model writes it (told which queries failed); otherwise a rule drops the query
words that most of the rejected passages share (they are what pulled those passages in) and keeps the rest.
The round counter it increments is the loop's budget, checked by the route before this node runs; the route
node then escalates the retrieval tool for the new round.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import settings_of
from prompts.rewrite import Rewrites, rewrite_messages
from rag.config import operator
from rag.context import Context
from rag.knowledge.passages import passage_text
from rag.retrieval.multi_query import content_words, keyword_form
from rag.state import StageTimer, State
from stores.text import language_of


def rewrite(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("rewrite")
    settings = settings_of(runtime)
    question = state["question"]
    tried = [state.get("query") or question, *state.get("variants", [])]
    query, note = None, None
    if operator().understand.llm_rewrites:
        language = state.get("language") or language_of(question)
        parsed, error = ask_structured(
            settings.model_for(operator().models.rewrite),
            rewrite_messages(question, language, 1, avoid=tried),
            Rewrites,
        )
        fresh = [q.strip() for q in parsed.queries if q.strip() and q.strip() not in tried] if parsed else []
        if fresh:
            query, note = fresh[0], "LLM rewrite"
        else:
            note = f"{error or 'LLM repeated a failed query'}; rule-based rewrite"
    if query is None:
        query = negative_feedback_query(question, state.get("candidates", []))
    round_ = state.get("retrieval_round", 0) + 1
    decision = f"round {round_} of {state.get('max_retrieval_rounds', 0)}: {query!r}"
    update: dict[str, Any] = {"query": query, "variants": [], "retrieval_round": round_}
    return {**update, "trace": [timer.record(decision, {"round": round_}, (), note)]}


def negative_feedback_query(question: str, rejected: list[dict[str, Any]]) -> str:
    """The question's keywords minus words found in most rejected passages (kept whole if nothing is left)."""
    words = list(dict.fromkeys(content_words(question)))
    if not rejected or len(words) < 2:
        return keyword_form(question)
    texts = [set(content_words(passage_text(p))) for p in rejected]
    kept = [w for w in words if sum(w in t for t in texts) * 2 <= len(texts)]
    return " ".join(kept) if kept and len(kept) < len(words) else keyword_form(question)
