"""A query analysed once where it enters: its language, keyword form, cheap features and class, and the rule
planner's decomposition. The understand node stores it in state; strategy, retrieval and the planner read it
instead of tokenizing and classifying the question again."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rag.planning.plan import Decomposition
from rag.planning.rules import rule_decomposition
from rag.retrieval.multi_query import keyword_form
from rag.retrieval.query_features import QueryClass, QueryFeatures, query_class, query_features
from stores.backend import Lexical
from stores.text import language_of


@dataclass(frozen=True)
class QueryAnalysis:
    text: str
    language: str  # ISO 639-1; English when it cannot be told
    keywords: str  # the rule keyword form (the understand node's variant)
    features: QueryFeatures
    query_class: QueryClass
    rule_plan: dict[str, Any] | None  # the rule decomposer's DAG (Decomposition.model_dump()) or None

    @property
    def decomposition(self) -> Decomposition | None:
        return Decomposition.model_validate(self.rule_plan) if self.rule_plan else None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QueryAnalysis:
        return cls(**{**data, "features": QueryFeatures(**data["features"])})


def analyse(text: str, bm25: Lexical) -> QueryAnalysis:
    """Analyse `text` against the index's vocabulary."""
    features = query_features(text, bm25)
    plan = rule_decomposition(text)
    return QueryAnalysis(text=text, language=language_of(text), keywords=keyword_form(text), features=features,
                         query_class=query_class(features), rule_plan=plan.model_dump() if plan else None)


def analysis_of(stored: dict[str, Any] | None, text: str, bm25: Lexical) -> QueryAnalysis:
    """The stored analysis when it is of `text` (a re-retrieval searches a rewritten query), else a new one."""
    if stored and stored.get("text") == text:
        return QueryAnalysis.from_dict(stored)
    return analyse(text, bm25)
