"""Shared pieces for graph and node tests: a tiny index, a deterministic evaluator, a context factory."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from cragraph.context import Context
from evaluators.base import RelevanceEvaluator
from stores.bundle import IndexBundle, IndexSettings
from stores.tokenize import tokenize

DOCS = [
    {
        "id": "volga",
        "title": "Volga",
        "text": "The Volga is the longest river in Europe. It flows into the "
        "Caspian Sea. Many cities stand on its banks, such as Kazan.",
    },
    {
        "id": "thames",
        "title": "Thames",
        "text": "The Thames flows through London. Tower Bridge crosses the Thames near the Tower of London.",
    },
    {
        "id": "curie",
        "title": "Marie Curie",
        "text": "Marie Curie discovered polonium and radium. She founded "
        "the Radium Institute in Paris. The building was completed "
        "in 1914.",
    },
    {
        "id": "kazan",
        "title": "Kazan",
        "text": "Kazan stands on the Volga river. The Kazan Kremlin is a fortress.",
    },
    {
        "id": "landau",
        "title": "Лев Ландау",
        "text": "Лев Ландау получил Нобелевскую премию по физике в 1962 "
        "году. Он работал в Институте физических проблем.",
    },
]


class KeywordEvaluator(RelevanceEvaluator):
    """Score = 2 * (share of the question's index terms found in the passage) - 1: predictable in tests."""

    name = "keyword-test"

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        wanted = set(tokenize(question))
        scores = []
        for passage in passages:
            found = set(tokenize(passage))
            scores.append(2.0 * len(wanted & found) / max(1, len(wanted)) - 1.0)
        return scores


def build_tiny_index(folder: Path, embedder_dir: Path, docs: Sequence[dict] = DOCS) -> Path:
    corpus = folder / "docs"
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "corpus.jsonl").write_text(
        "\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n", encoding="utf-8"
    )
    IndexBundle.build(folder / "index", [corpus], IndexSettings(embedder=str(embedder_dir)), progress=False)
    return folder / "index"


def use_keyword_evaluator(monkeypatch) -> KeywordEvaluator:
    """Make every node grade and refine with KeywordEvaluator instead of loading one by spec."""
    import functools

    from evaluators import registry

    evaluator = KeywordEvaluator()
    monkeypatch.setitem(registry.EVALUATOR_FACTORIES, "cosine", lambda target: evaluator)
    monkeypatch.setattr(registry, "_build", functools.cache(registry._build.__wrapped__))  # a cache of its own
    return evaluator


def context(index: Path, **overrides) -> Context:
    """Thresholds suited to KeywordEvaluator; web off unless a test turns it on. Selection keeps everything
    that fits the budget (select_min_gain -1): the tiny embedder's random vectors say nothing about
    relevance."""
    values = {
        "select_min_gain": -1.0,
        "index": str(index),
        "upper": 0.5,
        "lower": -0.6,
        "strip_threshold": -0.6,
        "answer_min_score": -0.6,
        "web_search": False,
        "prf": False,
        "rerank_fused_weight": 0.0,
    }
    return Context(**{**values, **overrides})
