"""Metadata-aware ranking: boost rows whose metadata matches, and predict a query's category from the corpus.

Filters (stores.docstore.DocStore.filter_rows) remove rows; boosts only reorder them, so a wrong guess about the
user's intent (a predicted category, a preferred language) costs a little rank, never a lost answer.

A boost spec maps a field to a value in the filter syntax, optionally with its own weight:

    {"language": "en"}                                   equality, default weight
    {"category": {"prefix": "cs"}}                       "cs", "cs.AI", ... (a prefix on the raw string)
    {"file": ["a.md", "b.md"]}                           any of
    {"date": {"gte": "2024-01-01", "lte": "2024-12-31"}} a range (ISO dates compare as strings)
    {"category": {"value": {"prefix": "cs"}, "weight": 0.5}}

A row's multiplier is 1 + the sum of the weights of the specs it matches, and it combines with the fused
retrieval score as `boosted = fused * multiplier`. Fused scores (RRF, min-max score fusion) are non-negative,
so a multiplier never flips a score's sign and a row matching nothing keeps its score exactly.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stores.backend import DocStoreView
from stores.docstore import DocStore, FilterError
from stores.types import Chunk

DEFAULT_BOOST_WEIGHT = 0.2
"""Weight of a spec that gives none: a matching row's fused score grows by 20%."""

_RANGE_KEYS = frozenset({"gte", "lte", "gt", "lt"})
_WEIGHTED_KEYS = frozenset({"value", "weight"})
_HIERARCHY = re.compile(r"[./>]")


def metadata_boosts(
    chunks: Sequence[Chunk],
    boosts: Mapping[str, Any],
    default_weight: float = DEFAULT_BOOST_WEIGHT,
) -> np.ndarray:
    """Score multipliers (>= 1 for non-negative weights) for `chunks`, in order: fused * multiplier ranks
    matching chunks up. Keys are `id`, `doc_id`, `title` or any metadata key; a chunk without the key never
    matches."""
    if not isinstance(boosts, Mapping):
        raise ValueError(f"boosts must be a mapping of field -> spec, got {type(boosts).__name__}")
    multipliers = np.ones(len(chunks), dtype=np.float64)
    specs = [(key, *_weighted(spec, default_weight)) for key, spec in boosts.items()]
    for i, chunk in enumerate(chunks):
        for key, spec, weight in specs:
            if matches(field_value(chunk, key), spec):
                multipliers[i] += weight
    return multipliers


def apply_boosts(scores: Sequence[float], multipliers: np.ndarray) -> np.ndarray:
    """The combination rule in one place: boosted = fused * multiplier."""
    return np.asarray(scores, dtype=np.float64) * multipliers


def field_value(chunk: Chunk, key: str) -> Any:
    """What a filter or boost on `key` compares: a chunk column or a metadata value (None when absent)."""
    if key in ("id", "doc_id", "title"):
        return getattr(chunk, key)
    return chunk.metadata.get(key)


def matches(value: Any, spec: Any) -> bool:
    """Whether `value` satisfies `spec`: a scalar (equality), a list (any item matches; items may themselves
    be prefix / range mappings), {"prefix": p} or a range {"gte"/"gt"/"lte"/"lt": bound}."""
    if value is None:
        return False
    if isinstance(spec, Mapping):
        if set(spec) == {"prefix"}:
            return str(value).startswith(str(spec["prefix"]))
        if spec and set(spec) <= _RANGE_KEYS:
            return _in_range(value, spec)
        raise ValueError(f"unsupported match spec {dict(spec)}: use a value, a list, {{'prefix': ...}} or a range")
    if isinstance(spec, list | tuple | set):
        return any(matches(value, item) for item in spec)
    return value == spec


def _in_range(value: Any, bounds: Mapping[str, Any]) -> bool:
    try:
        return all(
            (op == "gte" and value >= bound)
            or (op == "gt" and value > bound)
            or (op == "lte" and value <= bound)
            or (op == "lt" and value < bound)
            for op, bound in bounds.items()
        )
    except TypeError:  # a number against a string bound, or the reverse: not comparable, so no match
        return False


def _weighted(spec: Any, default_weight: float) -> tuple[Any, float]:
    if isinstance(spec, Mapping) and "value" in spec and set(spec) <= _WEIGHTED_KEYS:
        weight = spec.get("weight", default_weight)
        try:
            finite = not isinstance(weight, bool) and isinstance(weight, int | float) and np.isfinite(float(weight))
        except OverflowError:  # an int too large for a float
            finite = False
        if not finite:
            raise ValueError(f"boost weight must be a finite number, got {str(weight)[:40]}")
        return spec["value"], float(weight)
    return spec, default_weight


def check_filter_fields(docstore: DocStoreView, filters: Mapping[str, Any] | None, rows: np.ndarray | None,
                        visible: np.ndarray | None = None) -> None:
    """Raise FilterError naming the known fields when a filter that matched nothing the caller may see (`rows`
    empty) uses a field none of its documents has: a typo or a renamed key must not read as "no results".
    Fields are read from the `visible` rows only (None: all), so neither the list nor the error's presence tells
    a caller which fields hidden documents carry. Costs a scan only then."""
    if not filters or rows is None or len(rows):
        return
    shown = None if visible is None else set(np.asarray(visible).tolist())
    known = {"id", "doc_id", "title"}
    for row, chunk in docstore.iter_rows():
        if shown is None or row in shown:
            known.update(key for key, value in chunk.metadata.items() if value is not None)
    unknown = [key for key in filters if key not in known]
    if not unknown:
        return
    raise FilterError(f"unknown filter field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: no "
                      f"document has {'them' if len(unknown) > 1 else 'it'}; known fields: {', '.join(sorted(known))}")


# ------------------------------------------------------------------------------------------ category predictor


def category_levels(category: str) -> list[str]:
    """A hierarchical label and its ancestors, most general first: 'cs.AI' -> ['cs', 'cs.AI'],
    'science/physics' -> ['science', 'science/physics']."""
    category = str(category).strip()
    cuts = [m.start() for m in _HIERARCHY.finditer(category)]
    return [category[:cut] for cut in cuts if category[:cut]] + ([category] if category else [])


def category_spec(category: str) -> list[Any]:
    """The boost / match spec of a predicted category: the label itself or any label below it
    (a prefix alone would let 'cs' match 'csx')."""
    return [category, *({"prefix": category + sep} for sep in "./>")]


@dataclass
class CategoryPredictor:
    """Nearest-centroid guess of which corpus categories a query is about.

    Each category, and each ancestor of a hierarchical one, has the normalized mean of its chunks' stored
    vectors as centroid. Confidences are a softmax of cos(query, centroid) / temperature among the labels of
    the same depth, so 'cs' vs 'math' and 'cs.AI' vs 'cs.CL' each sum to 1 at their own level.
    """

    key: str
    labels: list[str]
    depths: np.ndarray
    centroids: np.ndarray
    doc_counts: np.ndarray
    temperature: float = 0.05

    @classmethod
    def from_bundle(
        cls, bundle: Any, key: str = "category", min_docs: int = 3, temperature: float = 0.05,
        visible: np.ndarray | None = None,
    ) -> CategoryPredictor | None:
        """The predictor of an opened IndexBundle over the `visible` rows (None: all; a caller's labels and
        centroids come from its own documents only, so no prediction or note names a hidden document's
        category), cached per bundle (path + manifest updated_at) and row set. None when fewer than two labels
        have `min_docs` documents (nothing to choose between)."""
        rows = None if visible is None else hashlib.sha1(np.asarray(visible, dtype=np.int64).tobytes()).hexdigest()
        cache_key = (
            str(Path(bundle.path).resolve()),
            str(bundle.manifest.get("updated_at")),
            key,
            min_docs,
            temperature,
            rows,
        )
        with _CACHE_LOCK:
            if cache_key in _CACHE:
                return _CACHE[cache_key]
        predictor = cls.build(bundle.docstore, bundle.dense, key, min_docs, temperature, visible)
        with _CACHE_LOCK:
            for stale in [k for k in _CACHE if k[0] == cache_key[0] and k[1] != cache_key[1]]:
                del _CACHE[stale]
            _CACHE[cache_key] = predictor
        return predictor

    @classmethod
    def build(
        cls, docstore: DocStore, dense: Any, key: str = "category", min_docs: int = 3, temperature: float = 0.05,
        visible: np.ndarray | None = None,
    ) -> CategoryPredictor | None:
        """From a docstore and its dense index (anything with `vectors_for(rows)`), over the `visible` rows."""
        rows_of: dict[str, list[int]] = {}
        docs_of: dict[str, set[str]] = {}
        shown = None if visible is None else set(np.asarray(visible).tolist())
        for row, chunk in docstore.iter_rows():
            if shown is not None and row not in shown:
                continue
            value = chunk.metadata.get(key)
            for label in {level for item in _as_list(value) for level in category_levels(item)}:
                rows_of.setdefault(label, []).append(row)
                docs_of.setdefault(label, set()).add(chunk.doc_id)
        labels = sorted(label for label in rows_of if len(docs_of[label]) >= min_docs)
        if len(labels) < 2:
            return None
        centroids = np.stack([dense.vectors_for(rows_of[label]).mean(axis=0) for label in labels])
        norms = np.linalg.norm(centroids, axis=1, keepdims=True)
        centroids = (centroids / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        return cls(
            key=key,
            labels=labels,
            depths=np.array([len(category_levels(label)) for label in labels]),
            centroids=centroids,
            doc_counts=np.array([len(docs_of[label]) for label in labels]),
            temperature=temperature,
        )

    def predict(self, query_vector: np.ndarray, top: int | None = None) -> list[tuple[str, float]]:
        """(category, confidence) best first; a parent and its children both appear, each with its own
        level's confidence."""
        cosines = self.centroids @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        confidence = np.zeros(len(self.labels), dtype=np.float64)
        for depth in np.unique(self.depths):
            level = self.depths == depth
            logits = cosines[level] / self.temperature
            weights = np.exp(logits - logits.max())
            confidence[level] = weights / weights.sum()
        order = sorted(range(len(self.labels)), key=lambda i: (-confidence[i], self.depths[i], self.labels[i]))
        ranked = [(self.labels[i], float(confidence[i])) for i in order]
        return ranked[:top] if top is not None else ranked

    def boosts(
        self, query_vector: np.ndarray, min_confidence: float = 0.5, weight: float = DEFAULT_BOOST_WEIGHT
    ) -> dict[str, Any]:
        """A boost spec for metadata_boosts from the most specific confident prediction; {} when none is
        confident (then the ranking is left alone)."""
        confident = [(label, c) for label, c in self.predict(query_vector) if c >= min_confidence]
        if not confident:
            return {}
        label, _ = max(confident, key=lambda item: (len(category_levels(item[0])), item[1]))
        return {self.key: {"value": category_spec(label), "weight": weight}}


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, list | tuple | set):
        return [str(v) for v in value if v not in (None, "")]
    return [str(value)]


_CACHE: dict[tuple[str, str, str, int, float, str | None], CategoryPredictor | None] = {}
_CACHE_LOCK = threading.Lock()
