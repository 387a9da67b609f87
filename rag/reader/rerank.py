"""Re-rank the reader's candidate spans with a small linear model over cheap features.

Why: the span pointer proposes the answer among its best spans far more often than it ranks it first; what it
lacks is cheap to say: the type the question asks for (when -> a year, how many -> a number, who -> a name), the
span's length, whether the question already names it, how well its sentence matches the question, which
passage it comes from. A linear model over these, fitted listwise on training questions
(`python -m cragraph_lab bench reader-training`), picks among the candidates; its weights sit in the
reader's config.json.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from rag.reader.types import ReaderAnswer
from stores.tokenize import tokenize

QUESTION_TYPES = ("time", "number", "person", "place", "other")
SPAN_TYPES = ("year", "number", "name", "other")
_QUESTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "time",
        re.compile(
            r"\bwhen\b|\bwhat (?:year|date|century|decade)\b|\bкогда\b|\bв как(?:ом|ой) (?:году|"
            r"веке|дату)|何时|什么时候|哪一?年|几年|何年|哪个世纪",
            re.I,
        ),
    ),
    (
        "number",
        re.compile(
            r"\bhow (?:many|much|long|old|far|large|big|tall|high)\b|\bwhat (?:percentage|"
            r"number|amount)\b|\bсколько\b|多少|几[个位名次种]",
            re.I,
        ),
    ),
    ("person", re.compile(r"\bwho\b|\bwhom\b|\bwhose\b|\bкто\b|\bкого\b|\bкому\b|谁|何人", re.I)),
    ("place", re.compile(r"\bwhere\b|\bгде\b|\bкуда\b|\bоткуда\b|哪里|哪儿|在哪|何地|何处", re.I)),
)
_YEAR = re.compile(r"(?<!\d)(?:1[0-9]{3}|20[0-9]{2})(?!\d)|\d+\s*年")
_DIGIT = re.compile(r"\d")
_BASE_FEATURES = ("span_score", "sentence", "rank", "log_length", "in_question", "in_title", "passage_rank")
FEATURES = _BASE_FEATURES + tuple(f"{q}x{s}" for q in QUESTION_TYPES for s in SPAN_TYPES)


def question_type(question: str) -> str:
    for name, pattern in _QUESTION_PATTERNS:
        if pattern.search(question):
            return name
    return "other"


def span_type(text: str) -> str:
    if _YEAR.search(text):
        return "year"
    if _DIGIT.search(text):
        return "number"
    words = [w for w in text.split() if w[:1].isalpha()]
    if words and all(w[:1].isupper() for w in words):
        return "name"
    return "other"


def features(question: str, candidates: Sequence[ReaderAnswer]) -> np.ndarray:
    """[n_candidates, len(FEATURES)] for one question's candidates (best first)."""
    asked = set(tokenize(question))
    kind = question_type(question)
    best = max((c.span_score for c in candidates), default=0.0)
    rows = np.zeros((len(candidates), len(FEATURES)), dtype=np.float32)
    for i, c in enumerate(candidates):
        terms = set(tokenize(c.text))
        length = len(c.text.split()) if " " in c.text.strip() else max(1, len(c.text) // 2)
        rows[i, :7] = (
            c.span_score - best,
            c.sentence_score,
            1.0 / (1 + i),
            math.log1p(length),
            len(terms & asked) / len(terms) if terms else 0.0,
            float(c.in_title),
            1.0 / (1 + c.passage),
        )
        rows[i, FEATURES.index(f"{kind}x{span_type(c.text)}")] = 1.0
    return rows


def rerank(question: str, candidates: list[ReaderAnswer], weights: Sequence[float]) -> list[ReaderAnswer]:
    """Candidates by the linear model's score, best first (the score replaces each answer's `score`)."""
    if not candidates:
        return candidates
    scores = features(question, candidates) @ np.asarray(weights, dtype=np.float32)
    order = np.argsort(-scores, kind="stable")
    return [replace(candidates[i], score=float(scores[i])) for i in order]
