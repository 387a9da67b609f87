"""Hybrid retrieval over an index (a bundle or a Milvus collection): BM25 + dense over query variants, fused.

Every hit carries its BM25 score, dense score, fused score, per-list ranks and which lists found it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rag.retrieval.access import restrict
from rag.retrieval.crosslingual import (
    GLOSS_WEIGHT,
    CrossLingual,
    best_sentence_rescored,
    crosslingual,
    passage_gloss_matches,
    with_gloss_matches,
)
from rag.retrieval.fusion import ranked, reciprocal_rank_fusion, weighted_score_fusion
from rag.retrieval.metadata import check_filter_fields
from rag.settings import setting
from stores.backend import Index
from stores.types import Hit

Mode = Literal["hybrid", "bm25", "dense"]
Fusion = Literal["dynamic", "score", "rrf"]
MODES: tuple[str, ...] = ("hybrid", "bm25", "dense")
FUSIONS: tuple[str, ...] = ("dynamic", "score", "rrf")


class QueryError(ValueError):
    """A query that cannot be searched (empty, or longer than the limit)."""


@dataclass
class RetrievalSettings:
    """How a search is run.

    fusion:
      dynamic  min-max score fusion whose dense weight depends on the query: when BM25's best hit stands clearly
               above its second (relative gap > peak_gap) the query has a strong lexical match and BM25 gets more
               say (alpha_peaked); otherwise dense leads (alpha_flat). Chosen by measurement (README).
      score    min-max score fusion with a fixed dense weight `alpha`.
      rrf      reciprocal rank fusion, k = 60, 1-based ranks, lists weighted equally.
    """

    mode: Mode = setting("hybrid", "hybrid, bm25 or dense.")
    pool: int = setting(100, "Candidates each ranked list contributes to fusion.")
    fusion: Fusion = setting(
        "dynamic",
        "How BM25 and dense lists are fused: dynamic (min-max score fusion, dense weight chosen per query), "
        "score (fixed dense weight alpha) or rrf.",
    )
    alpha: float = setting(0.8, "Dense weight of `score` fusion (BM25 gets 1 - alpha).")
    alpha_peaked: float = setting(
        0.6, "Dynamic fusion: dense weight when BM25's top hit clearly stands out (a strong lexical match)."
    )
    alpha_flat: float = setting(0.9, "Dynamic fusion: dense weight otherwise.")
    peak_gap: float = setting(
        0.15, "Dynamic fusion: relative gap between BM25's first and second scores that counts as standing out."
    )
    max_query_chars: int = setting(8000, "Longest query searched; a longer one is refused.")


class HybridRetriever:
    def __init__(
        self, bundle: Index, settings: RetrievalSettings | None = None, visible: np.ndarray | None = None
    ):
        """`visible`: the rows the caller may see (rag.retrieval.access); None = every row."""
        self.bundle = bundle
        self.settings = settings or RetrievalSettings()
        self.visible = visible

    def allowed_rows(self, filters: Mapping[str, Any] | None) -> np.ndarray | None:
        """Rows a search may score: those the filters match, within those the caller may see (None: all)."""
        rows = restrict(self.bundle.docstore.filter_rows(filters) if filters else None, self.visible)
        check_filter_fields(self.bundle.docstore, filters, rows, self.visible)
        return rows

    def search(self, query: str | Sequence[str], k: int = 10, mode: Mode | None = None,
               filters: Mapping[str, Any] | None = None) -> list[Hit]:
        """Top-k chunks for a query (or several variants of one), best first, deduplicated by chunk id."""
        queries = [query] if isinstance(query, str) else list(query)
        queries = [self._checked(q) for q in queries]
        mode = mode or self.settings.mode
        if mode not in MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; expected one of {', '.join(MODES)}")
        if k <= 0:
            return []
        allowed = self.allowed_rows(filters)
        if allowed is not None and not len(allowed):
            return []
        pool = max(self.settings.pool, k)
        # A question in a script none of the index's languages use: BM25 cannot match its words (measured on
        # xquad_train: no BM25 weight beat none), so hybrid runs dense, plus BM25 over dictionary glosses between
        # Chinese and English (rag.retrieval.crosslingual).
        crossing = self.crosslingual(queries[0]) if mode == "hybrid" else None
        if crossing:
            mode = "dense"
        bm25_lists = [self._bm25(q, pool, allowed) for q in queries] if mode != "dense" else []
        dense_lists = []
        if mode != "bm25":
            vectors = self.bundle.embedder.embed_queries(queries)
            if crossing:
                vectors = crossing.moved(vectors)
            dense_lists = [self._dense(v, pool, allowed) for v in vectors]
        if mode == "hybrid":
            fused, alphas = self._fuse(queries, bm25_lists, dense_lists, vectors)
        else:  # a cross-lingual hybrid search says its dense weight: 1, less the glosses' share when they run
            fused, alphas = _mean_of(bm25_lists or dense_lists), [1.0] if crossing else []
        if crossing:
            fused = best_sentence_rescored(self.bundle, vectors[0], fused)
            if crossing.glosses:
                bm25_lists = [self._bm25(crossing.glosses, pool, allowed)]
            elif crossing.passage_glosses:
                bm25_lists = [passage_gloss_matches(self.bundle, queries[0], fused)]
            if bm25_lists:
                fused = with_gloss_matches(fused, bm25_lists[0])
                alphas = [1.0 - GLOSS_WEIGHT]
        return self._hits(ranked(fused)[:k], fused, bm25_lists, dense_lists, alphas)

    def crosslingual(self, question: str) -> CrossLingual | None:
        """Why hybrid search runs dense only for this question (its script is none of the index's), or None."""
        return crosslingual(self.bundle, question, self.visible)

    def dense_search(self, vector: np.ndarray, k: int, filters: Mapping[str, Any] | None = None) -> list[Hit]:
        """Top-k chunks for a ready query vector (HyDE's blend of question and hypothetical passage)."""
        allowed = self.allowed_rows(filters)
        if allowed is not None and not len(allowed):
            return []
        scores = self._dense(np.asarray(vector, dtype=np.float32), k, allowed)
        return self._hits(ranked(scores)[:k], scores, [], [scores], [])

    def _bm25(self, query: str, pool: int, allowed: np.ndarray | None) -> dict[int, float]:
        ids, scores = self.bundle.bm25.search(query, pool, allowed=allowed)
        return dict(zip(ids.tolist(), scores.tolist(), strict=True))

    def _dense(self, vector: np.ndarray, pool: int, allowed: np.ndarray | None) -> dict[int, float]:
        ids, scores = self.bundle.dense.search(vector, pool, allowed=allowed)
        return dict(zip(ids.tolist(), scores.tolist(), strict=True))

    def _fuse(self, queries: list[str], bm25_lists: list[dict[int, float]], dense_lists: list[dict[int, float]],
              vectors: np.ndarray) -> tuple[dict[int, float], list[float]]:
        settings = self.settings
        if settings.fusion == "rrf":
            return reciprocal_rank_fusion([ranked(scores) for scores in [*bm25_lists, *dense_lists]]), []
        # Score fusion normalizes over the union of candidates, so a candidate one list missed is scored
        # exactly by that side (BM25 of the query, cosine to its stored vector) instead of counted as zero.
        candidates = sorted(set().union(*bm25_lists, *dense_lists))
        stored = self.bundle.dense.vectors_for(candidates)
        per_query, alphas = [], []
        for query, vector, bm25_list in zip(queries, vectors, bm25_lists, strict=True):
            alpha = self.dense_weight_for(bm25_list)
            bm25 = dict(zip(candidates, self.bundle.bm25.scores_for(query, candidates).tolist(), strict=True))
            dense = dict(zip(candidates, (stored @ vector).tolist(), strict=True))
            per_query.append(weighted_score_fusion([bm25, dense], [1.0 - alpha, alpha]))
            alphas.append(alpha)
        return _mean_of(per_query), alphas

    def dense_weight_for(self, bm25_list: dict[int, float]) -> float:
        """The dense weight of score fusion for one query, from how clearly BM25's top hit stands out."""
        if self.settings.fusion == "score":
            return self.settings.alpha
        top = sorted(bm25_list.values(), reverse=True)[:2]
        if not top or top[0] <= 0:
            return self.settings.alpha_flat
        gap = (top[0] - (top[1] if len(top) > 1 else 0.0)) / top[0]
        return self.settings.alpha_peaked if gap > self.settings.peak_gap else self.settings.alpha_flat

    def _hits(self, top: list[int], fused: dict[int, float], bm25_lists: list[dict[int, float]],
              dense_lists: list[dict[int, float]], alphas: list[float]) -> list[Hit]:
        named = [(f"bm25:{i}", scores) for i, scores in enumerate(bm25_lists)]
        named += [(f"dense:{i}", scores) for i, scores in enumerate(dense_lists)]
        ranks = [{doc: r for r, doc in enumerate(ranked(scores), start=1)} for _, scores in named]
        hits = []
        for row, chunk in zip(top, self.bundle.docstore.get(top), strict=True):
            scores: dict[str, float] = {"fused": float(fused[row])}
            if alphas:
                scores["alpha"] = float(np.mean(alphas))
            sources = []
            for (name, list_scores), list_ranks in zip(named, ranks, strict=True):
                if row not in list_scores:
                    continue
                kind = name.split(":")[0]
                sources.append(name)
                scores[kind] = max(scores.get(kind, -np.inf), float(list_scores[row]))
                scores[f"{kind}_rank"] = min(scores.get(f"{kind}_rank", np.inf), list_ranks[row])
            hits.append(Hit(chunk=chunk, score=float(fused[row]), scores=scores, sources=sources))
        return hits

    def _checked(self, query: str) -> str:
        if not isinstance(query, str) or not query.strip():
            raise QueryError("the query is empty")
        if len(query) > self.settings.max_query_chars:
            raise QueryError(f"the query has {len(query):,} characters; the limit is "
                             f"{self.settings.max_query_chars:,} (RetrievalSettings.max_query_chars)")
        return query.strip()


def _mean_of(lists: list[dict[int, float]]) -> dict[int, float]:
    """Average per-variant scores; a variant that did not find a document contributes 0 for it."""
    if len(lists) == 1:
        return dict(lists[0])
    total: dict[int, float] = {}
    for scores in lists:
        for doc, value in scores.items():
            total[doc] = total.get(doc, 0.0) + value / len(lists)
    return total
