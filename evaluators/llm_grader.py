"""Relevance graded by any LangChain chat model: {"relevance": 0|1|2} mapped to -1, 0, +1.

The reply must be a JSON object (bare, or alone inside one ``` / ```json fence) with an integer `relevance` in
{0, 1, 2}; anything else is unparsed. An unparsed reply scores -1.0 (treated as not relevant: a grader that
cannot say a passage helps gives no evidence that it does) and is counted in `unparsed`, so the grade node can
put the count in the trace and a weak model's failures stay visible.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel

from evaluators.base import RelevanceEvaluator
from models.chat import message_text
from prompts.grade import grade_messages

RELEVANCE_TO_SCORE = {0: -1.0, 1: 0.0, 2: 1.0}
UNPARSED_SCORE = -1.0
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)\n?\s*```", re.DOTALL)


def parse_relevance(reply: str) -> int | None:
    """The relevance grade in a reply, or None when the reply is not the strict JSON asked for."""
    text = reply.strip()
    fenced = _FENCE.fullmatch(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    value = payload.get("relevance")
    if isinstance(value, bool) or not isinstance(value, int) or value not in RELEVANCE_TO_SCORE:
        return None
    return value


class LLMGraderEvaluator(RelevanceEvaluator):
    """One chat call per passage; `max_concurrency` of them in flight at a time (raise it for hosted models)."""

    def __init__(self, model: BaseChatModel, name: str = "llm", max_concurrency: int = 1,
                 max_passage_chars: int = 4000) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.model = model
        self.name = name
        self.max_concurrency = max_concurrency
        self.max_passage_chars = max_passage_chars
        self.graded = 0
        self.unparsed = 0
        self._lock = threading.Lock()
        self._mine = threading.local()  # this thread's counts since take_counts: one node's scoring

    def reset_counters(self) -> None:
        with self._lock:
            self.graded = 0
            self.unparsed = 0

    def take_counts(self) -> tuple[int, int]:
        """(graded, unparsed) by the calling thread since its last call, then zero: what one node's scoring
        produced, while other runs share this instance (the totals above mix them)."""
        counts = (getattr(self._mine, "graded", 0), getattr(self._mine, "unparsed", 0))
        self._mine.graded = self._mine.unparsed = 0
        return counts

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        prompts: list[LanguageModelInput] = [grade_messages(question, p[: self.max_passage_chars]) for p in passages]
        config: Any = {"max_concurrency": self.max_concurrency}
        replies = self.model.batch(prompts, config=config)
        grades = [parse_relevance(message_text(reply)) for reply in replies]
        unparsed = sum(g is None for g in grades)
        with self._lock:
            self.graded += len(grades)
            self.unparsed += unparsed
        self._mine.graded = getattr(self._mine, "graded", 0) + len(grades)
        self._mine.unparsed = getattr(self._mine, "unparsed", 0) + unparsed
        return [UNPARSED_SCORE if g is None else RELEVANCE_TO_SCORE[g] for g in grades]
