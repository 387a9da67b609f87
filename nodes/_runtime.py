"""What every node needs: its run's settings, the cached index bundle and the cached evaluator.

Heavy objects come from the per-process caches (load_bundle, load_embedder, load_evaluator, load_chat_model),
never from state, so state stays JSON-able and a server loads each model once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cragraph.context import Context
from cragraph.models.embedder import canonical_name
from cragraph.policy import ClientContext, check_types, client_context
from cragraph.retrieval.access import caller_labels, visible_rows
from evaluators.base import RelevanceEvaluator
from evaluators.registry import load_evaluator
from stores.bundle import IndexBundle, load_bundle


def settings_of(runtime: Any) -> Context:
    """The run's Context; a run started without one (Studio, a bare invoke) gets the defaults + env. A dict is a
    client's and goes through the operator's allow-list; an operator's Context is only type-checked."""
    context = getattr(runtime, "context", None) if runtime is not None else None
    if context is None:
        context = Context()
    if isinstance(context, dict):
        return client_context(context)
    if not isinstance(context, ClientContext):
        check_types(context)
    return context


def caller_access(runtime: Any) -> frozenset[str] | None:
    """The caller's access labels. None (every document) in the operator's own process; on a LangGraph server
    (which sets `runtime.server_info`) the authenticated user's "acl:<label>" permissions, none for a user
    without any (public documents only). Neither context, input nor filters can add labels."""
    info = getattr(runtime, "server_info", None) if runtime is not None else None
    if info is None:
        return None
    user = info.user
    return caller_labels(getattr(user, "permissions", None) if user is not None else None)


def visible_of(runtime: Any, bundle: IndexBundle) -> np.ndarray | None:
    """The index rows the run's caller may see (None: all)."""
    return visible_rows(bundle, caller_access(runtime))


def bundle_of(settings: Context) -> IndexBundle:
    """The index bundle, opened once per process; refuses an embedder other than the index's own."""
    bundle = load_bundle(settings.index)
    built_with = bundle.settings.embedder
    if settings.embedder and canonical_name(settings.embedder) != canonical_name(built_with):
        raise ValueError(
            f"the index at {settings.index} was built with embedder {built_with!r}, "
            f"not {settings.embedder!r}; use its embedder or rebuild the index"
        )
    return bundle


def evaluator_spec(settings: Context, bundle: IndexBundle) -> str:
    """'cosine' means the calibrated cosine on the index's own embedder."""
    spec = settings.evaluator.strip()
    return f"cosine:{bundle.settings.embedder}" if spec.lower() == "cosine" else spec


def evaluator_of(settings: Context, bundle: IndexBundle) -> RelevanceEvaluator:
    return load_evaluator(evaluator_spec(settings, bundle))


def lazy_evaluator(settings: Context) -> Callable[[], RelevanceEvaluator]:
    """The run's evaluator, opened (index and model) only if a caller needs it."""
    return lambda: evaluator_of(settings, bundle_of(settings))
