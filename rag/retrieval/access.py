"""Per-document access control: which index rows a caller may see, from the documents' `acl` labels.

A document carries labels in its metadata (`"metadata": {"acl": ["team-a", "hr"]}`, or one string); a document
without labels is public. A caller holds labels too (a server maps each API key to them, cragraph/auth.py); it
sees the public documents and those sharing a label with it. `None` for a caller means no restriction: the
operator in its own process (the CLI, a script). The retriever intersects every search's allowed rows (metadata
filters included) with the visible rows before scoring, so no path can rank, return or count a hidden chunk,
and a filter can only narrow what the caller sees.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

ACL_KEY = "acl"
PERMISSION_PREFIX = "acl:"  # how a server's authenticated user carries its labels: permissions "acl:<label>"

_lock = threading.Lock()
_label_rows: weakref.WeakKeyDictionary[Any, tuple[int, np.ndarray, dict[str, np.ndarray]]] = weakref.WeakKeyDictionary()


def labels_of(value: Any) -> frozenset[str]:
    """A document's labels from its `acl` metadata: a string or a list of strings (anything else: none)."""
    if isinstance(value, str):
        return frozenset({value.strip()} - {""})
    if isinstance(value, list | tuple):
        return frozenset(v.strip() for v in value if isinstance(v, str) and v.strip())
    return frozenset()


def caller_labels(permissions: Iterable[Any] | None) -> frozenset[str]:
    """A server user's labels: its permissions named "acl:<label>"."""
    return frozenset(
        p[len(PERMISSION_PREFIX) :].strip()
        for p in permissions or ()
        if isinstance(p, str) and p.startswith(PERMISSION_PREFIX) and p[len(PERMISSION_PREFIX) :].strip()
    )


def visible_rows(bundle: Any, labels: frozenset[str] | None) -> np.ndarray | None:
    """Rows a caller with `labels` may see (sorted), or None when it may see every row."""
    if labels is None:
        return None
    public, by_label = _rows_by_label(bundle)
    parts = [public, *(by_label[label] for label in sorted(labels) if label in by_label)]
    rows = np.unique(np.concatenate(parts)) if len(parts) > 1 else public
    # Every row visible (an unlabelled index, or a caller holding every label): no restriction, so searches
    # keep their fast unfiltered path.
    return None if len(rows) == len(bundle.docstore) else rows


def restrict(allowed: np.ndarray | None, visible: np.ndarray | None) -> np.ndarray | None:
    """The rows both a filter and the caller's access allow (None: no restriction from either)."""
    if visible is None:
        return allowed
    if allowed is None:
        return visible
    return np.intersect1d(np.asarray(allowed, dtype=np.int64), visible, assume_unique=False)


def _rows_by_label(bundle: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(public rows, rows per label), read once per opened bundle (and again if its row count changed)."""
    size = len(bundle.docstore)
    with _lock:
        cached = _label_rows.get(bundle)
        if cached is not None and cached[0] == size:
            return cached[1], cached[2]
        public: list[int] = []
        by_label: dict[str, list[int]] = {}
        for row, chunk in bundle.docstore.iter_rows():
            labels = labels_of((chunk.metadata or {}).get(ACL_KEY))
            if not labels:
                public.append(row)
            for label in labels:
                by_label.setdefault(label, []).append(row)
        rows = {label: np.asarray(sorted(found), dtype=np.int64) for label, found in by_label.items()}
        _label_rows[bundle] = (size, np.asarray(sorted(public), dtype=np.int64), rows)
        return _label_rows[bundle][1], rows
