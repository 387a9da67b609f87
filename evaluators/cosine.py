"""Embedder cosine similarity, calibrated into [-1, 1]: the relevance evaluator that works with no trained model.

e5 cosines are compressed (nearly every pair lands in 0.7-0.9), so the raw cosine is mapped linearly by two
calibration points, cos_lo -> -1 and cos_hi -> +1, and clamped. The points come from gold vs non-gold passages
among each question's dense top-10 on hotpotqa_migres200: cos_lo is the 5th percentile of the non-gold
cosines, cos_hi the 95th percentile of the gold ones (cragraph_lab/cosine_calibration.py). Re-measure with
    python -m cragraph_lab bench cosine-calibration ../shared/data/hotpotqa_migres200 --embedder e5-small
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from evaluators.base import RelevanceEvaluator, lazy_embedder

# (cos_lo, cos_hi) per embedder, measured as the module docstring says on hotpotqa_migres200 (200 questions,
# dense top-10 each over the 1,971-passage corpus, passage = title + ". " + text):
# e5-small (fp32 rebuild): 374 gold cosines (5/50/95th pct .832/.878/.921), 1,626 non-gold (.801/.826/.875),
#   ROC-AUC .895. Mapped, the median gold passage scores +0.28 and the median non-gold -0.58; a mapped
#   threshold of 0 keeps 70% of gold and 11% of non-gold passages.
# minilm (all-MiniLM-L6-v2, English only): 353 gold (.374/.600/.802), 1,647 non-gold (.303/.414/.635).
CALIBRATION: dict[str, tuple[float, float]] = {
    "e5-small": (0.8014, 0.9211),
    "minilm": (0.3033, 0.8016),
}
# Any other embedder: plain cosine, 0 -> -1 and 1 -> +1, until someone measures it.
UNCALIBRATED = (0.0, 1.0)


def default_calibration(embedder_name: str) -> tuple[float, float]:
    """The measured (cos_lo, cos_hi) for an embedder name or any of its aliases."""
    from models.embedder import canonical_name

    return CALIBRATION.get(canonical_name(embedder_name), UNCALIBRATED)


def map_cosines(cosines: np.ndarray, cos_lo: float, cos_hi: float) -> np.ndarray:
    """Linear map cos_lo -> -1, cos_hi -> +1, clamped to [-1, 1]."""
    return np.clip(2.0 * (np.asarray(cosines, dtype=np.float64) - cos_lo) / (cos_hi - cos_lo) - 1.0, -1.0, 1.0)


def calibration_points(
    positive: Sequence[float], negative: Sequence[float], low_pct: float = 5.0, high_pct: float = 95.0
) -> tuple[float, float]:
    """(cos_lo, cos_hi): the low_pct percentile of non-relevant cosines and high_pct of relevant ones."""
    if len(positive) == 0 or len(negative) == 0:
        raise ValueError("calibration needs both relevant and non-relevant cosines")
    cos_lo = float(np.percentile(np.asarray(negative, dtype=np.float64), low_pct))
    cos_hi = float(np.percentile(np.asarray(positive, dtype=np.float64), high_pct))
    if cos_hi <= cos_lo:
        raise ValueError(f"degenerate calibration: cos_hi {cos_hi:.4f} <= cos_lo {cos_lo:.4f}")
    return cos_lo, cos_hi


VECTOR_CACHE_SIZE = 20_000
_INSTANCES: weakref.WeakSet[CosineEvaluator] = weakref.WeakSet()


def forget_passage_vectors() -> None:
    """Empty every cosine evaluator's vector cache (benchmarks: one mode must not reuse another's work)."""
    for evaluator in list(_INSTANCES):
        with evaluator._lock:
            evaluator._vectors.clear()


class CosineEvaluator(RelevanceEvaluator):
    """cosine(query vector, passage vector) from the shared embedder, mapped into [-1, 1].

    The embedder loads on the first `score` call (through models.embedder's per-process cache), so building
    the evaluator is cheap; pass `embedder` to reuse one already loaded (any object with embed_queries /
    embed_passages returning L2-normalized rows).
    """

    def __init__(self, embedder_name: str = "e5-small", cos_lo: float | None = None,
                 cos_hi: float | None = None, embedder: Any = None) -> None:
        default_lo, default_hi = default_calibration(embedder_name)
        self.cos_lo = default_lo if cos_lo is None else float(cos_lo)
        self.cos_hi = default_hi if cos_hi is None else float(cos_hi)
        if self.cos_hi <= self.cos_lo:
            raise ValueError(f"cos_hi ({self.cos_hi}) must be greater than cos_lo ({self.cos_lo})")
        self.embedder_name = embedder_name
        self.name = f"cosine:{embedder_name}"
        self._embedder: Any = embedder
        self._lock = threading.Lock()
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        _INSTANCES.add(self)

    @property
    def embedder(self) -> Any:
        with self._lock:
            self._embedder = lazy_embedder(self._embedder, self.embedder_name)
            return self._embedder

    def cosines(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """Raw cosines (embedder vectors are L2-normalized), before calibration."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        query = self.embedder.embed_queries([question])[0]
        return self.passage_vectors(passages) @ query

    def passage_vectors(self, passages: Sequence[str]) -> np.ndarray:
        """Passage vectors, the most recent VECTOR_CACHE_SIZE kept by text: refine, the answer and the highlight
        score the same sentences of the same passages, and a server sees the same passages again and again."""
        with self._lock:
            missing = list(dict.fromkeys(p for p in passages if p not in self._vectors))
        if missing:
            fresh = self.embedder.embed_passages(missing, batch_size=max(1, len(missing)))
            with self._lock:
                self._vectors.update(zip(missing, fresh, strict=True))
        with self._lock:
            for text in passages:
                self._vectors.move_to_end(text)
            rows = [self._vectors[text] for text in passages]
            while len(self._vectors) > VECTOR_CACHE_SIZE:
                self._vectors.popitem(last=False)
        return np.stack(rows)

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        return map_cosines(self.cosines(question, passages), self.cos_lo, self.cos_hi).tolist()

