"""What every node needs: its run's settings, the cached index bundle and the cached evaluator.

Heavy objects come from the per-process caches (load_bundle, load_embedder, load_evaluator, load_chat_model),
never from state, so state stays JSON-able and a server loads each model once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.config import get_config

from evaluators.base import RelevanceEvaluator
from evaluators.registry import load_evaluator
from evaluators.thresholds import load_thresholds
from rag.config import operator
from rag.config.moved import moved_message
from rag.context import Context
from rag.inputs import check_context
from rag.policy import ClientContext, UnknownSetting, check_types, client_context, field_names
from rag.retrieval.access import caller_labels, visible_rows
from stores.backend import Index, load_index
from stores.bundle import BundleError


def settings_of(runtime: Any) -> Context:
    """The run's Context; a run started without one (Studio, a bare invoke) gets the defaults + env. A dict is a
    client's and goes through the operator's allow-list; an operator's Context is only type-checked.

    Settings come from the run's context only. A Context field in `config["configurable"]` (the pre-0.6 way,
    e.g. `{"configurable": {"index": ...}}`) is refused, naming the fields, unless it is the server's mirror of
    the run's context (a server copies a run's context into configurable, and a configurable-only run's
    configurable into its context): silently running on the default index would answer from other documents."""
    context = getattr(runtime, "context", None) if runtime is not None else None
    check_context(context)
    if context is None:
        context = Context()
    if isinstance(context, dict):
        context = client_context(context)
    elif not isinstance(context, ClientContext):
        check_types(context)
    _refuse_configurable_settings(context)
    return context


def _refuse_configurable_settings(context: Context) -> None:
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # a node called outside a graph run (tests, scripts)
        return
    given = context.given if isinstance(context, ClientContext) else frozenset()
    moved = [message for message in map(moved_message, sorted(configurable)) if message]
    if moved:
        raise UnknownSetting(f"config['configurable'] sets {'; '.join(moved)}")
    stray = sorted(set(configurable) & set(field_names()) - given)
    if stray:
        raise UnknownSetting(
            f"config['configurable'] sets {', '.join(stray)}, but settings are read from the run's context only: "
            f"pass context=Context({stray[0]}=...) or set CRAGRAPH_{stray[0].upper()} in the environment"
        )


def caller_access(runtime: Any) -> frozenset[str] | None:
    """The caller's access labels. None (every document) in the operator's own process; on a LangGraph server
    (which sets `runtime.server_info`) the authenticated user's "acl:<label>" permissions, none for a user
    without any (public documents only). Neither context, input nor filters can add labels."""
    info = getattr(runtime, "server_info", None) if runtime is not None else None
    if info is None:
        return None
    user = info.user
    return caller_labels(getattr(user, "permissions", None) if user is not None else None)


def visible_of(runtime: Any, bundle: Index) -> np.ndarray | None:
    """The index rows the run's caller may see (None: all)."""
    return visible_rows(bundle, caller_access(runtime))


class IndexUnavailable(ValueError, BundleError):
    """The run's index cannot be used. A ValueError, so a LangGraph server returns its message to the client (it
    masks a plain BundleError as "An internal error occurred"); still a BundleError for callers that catch one.
    The message names paths as the settings give them and shortens absolute ones to their last part, since it
    may reach a client who should not learn where the operator keeps files (the server log has the full one)."""


# An absolute path inside a message (not a URL's path): its folders are dropped, its last part kept.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:[^\s'\"`;,()/]+/)*([^\s'\"`;,()/]+)")


def shown_path(path: str) -> str:
    """A path as a message may show it: relative as given, absolute as ".../<last part>"."""
    return _ABSOLUTE_PATH.sub(r".../\1", path)


def _client_message(message: str, index: str) -> str:
    resolved = str(Path(index).expanduser().resolve())
    return shown_path(message.replace(resolved, shown_path(index)))


def bundle_of(settings: Context) -> Index:
    """The run's index (the bundle at `index`, or the Milvus collection at `index_uri` when index_backend is
    'milvus'), opened once per process. A problem (no index there, damaged, unreachable, being written) is an
    IndexUnavailable that says what to do."""
    milvus = settings.index_backend == "milvus"
    location = settings.index_uri if milvus else settings.index
    if milvus and not location.strip():
        raise IndexUnavailable("index_backend is 'milvus' but index_uri is empty: set it to a Milvus Lite file "
                               "(FILE.db) or a server (http://host:19530)")
    if not location.strip():
        raise IndexUnavailable("Context.index is empty: set it to the folder of an index built with `cragraph index "
                               "PATH... --index FOLDER` (or CRAGRAPH_INDEX)")
    try:
        bundle = load_index(settings.index_backend, location)
    except BundleError as error:
        raise IndexUnavailable(_client_message(str(error), location)) from error
    return bundle


def evaluator_spec(settings: Context, bundle: Index) -> str:
    """'cosine' means the calibrated cosine on the index's own embedder."""
    spec = settings.evaluator.strip()
    return f"cosine:{bundle.settings.embedder}" if spec.lower() == "cosine" else spec


def evaluator_of(settings: Context, bundle: Index) -> RelevanceEvaluator:
    return load_evaluator(evaluator_spec(settings, bundle))


def lazy_evaluator(settings: Context) -> Callable[[], RelevanceEvaluator]:
    """The run's evaluator, opened (index and model) only if a caller needs it."""
    return lambda: evaluator_of(settings, bundle_of(settings))


def thresholds_for(settings: Context, bundle: Any) -> tuple[float, float, str]:
    """(upper, lower, where they came from), as grading, refinement and the web branch all read them: the
    thresholds calibrated for this index and evaluator (`python -m cragraph_lab eval evaluator --store-thresholds`) when
    there are any, else the operator's [grade] upper / lower."""
    stored = load_thresholds(bundle.path, settings.evaluator)
    if stored is not None:
        return stored.upper, stored.lower, "calibrated for this index"
    grade = operator().grade
    return grade.upper, grade.lower, "[grade]"
