"""The relevance-evaluator interface and the CRAG grading rule.

An evaluator scores (question, passage) pairs in [-1, 1]: -1 irrelevant, +1 relevant. The grade node turns a
passage list's scores into CRAG's three actions with two thresholds, and the refine node scores knowledge strips
with the same `score` call (a strip is just a short passage).
"""

from __future__ import annotations

import math
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

Grade = Literal["correct", "ambiguous", "incorrect"]


def grade(scores: Sequence[float], upper: float, lower: float) -> Grade:
    """CRAG's rule: `correct` if any score > upper; `incorrect` if all scores < lower (or there are none);
    otherwise `ambiguous`."""
    if upper < lower:
        raise ValueError(f"grade thresholds need upper >= lower, got upper={upper} < lower={lower}")
    if not scores:
        return "incorrect"
    if any(s > upper for s in scores):
        return "correct"
    if all(s < lower for s in scores):
        return "incorrect"
    return "ambiguous"


def clamp_unit(value: float) -> float:
    """Clamp into [-1, 1]; NaN (a broken model output) counts as irrelevant."""
    if math.isnan(value):
        return -1.0
    return max(-1.0, min(1.0, float(value)))


class RelevanceEvaluator(ABC):
    """Scores passages for one question. Subclasses implement `_score_batch`; batching and clamping live here."""

    name: str = "evaluator"

    def score(self, question: str, passages: Sequence[str], batch_size: int = 16) -> list[float]:
        """One score in [-1, 1] per passage, in input order, computed `batch_size` passages at a time."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        items = list(passages)
        scores: list[float] = []
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            raw = self._score_batch(question, batch)
            if len(raw) != len(batch):
                raise RuntimeError(f"{self.name} returned {len(raw)} scores for {len(batch)} passages")
            scores.extend(clamp_unit(s) for s in raw)
        return scores

    @abstractmethod
    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        """Scores for one non-empty batch; values outside [-1, 1] are clamped by `score`."""

    grade = staticmethod(grade)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")


def resolve_model_source(source: str, kind: str) -> str:
    """Check a Hugging Face id or local folder before loading, so a typo fails with a clear message.

    An existing path is used as a local folder. Anything that looks like a path (absolute, `./`, `~`, more
    than one `/`) but does not exist raises FileNotFoundError instead of a confusing hub lookup.
    """
    source = (source or "").strip()
    if not source:
        raise ValueError(f"{kind} evaluator needs a Hugging Face model id or a local folder")
    path = Path(source).expanduser()
    if path.exists():
        if not path.is_dir():
            raise FileNotFoundError(f"{kind} evaluator model path {source!r} is a file; give the model folder")
        return str(path)
    if not _HUB_ID.match(source):
        raise FileNotFoundError(f"{kind} evaluator model folder not found: {source!r}")
    return source


def load_error(kind: str, source: str, err: Exception) -> OSError:
    """The error to raise when a hub id could not be loaded (offline machine, typo, gated model)."""
    offline = os.environ.get("HF_HUB_OFFLINE", "unset")
    return OSError(
        f"could not load the {kind} evaluator model {source!r}: it is not a local folder and could not be "
        f"loaded from the Hugging Face hub or its local cache (offline? HF_HUB_OFFLINE={offline}). Cause: {err}"
    )



def lazy_embedder(current: Any, name: str) -> Any:
    """The embedder an evaluator was given, or the process-wide one for `name`, loaded on first use."""
    if current is not None:
        return current
    from models.embedder import load_embedder

    return load_embedder(name)
