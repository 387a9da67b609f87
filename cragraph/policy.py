"""What a run's caller may set: the operator's allow-list of Context fields, budget caps and type checks.

Two kinds of caller. The operator configures the process: CRAGRAPH_* environment variables (langgraph.json's
"env", the shell that starts `cragraph serve` / `langgraph dev`) and any `Context(...)` built in Python (the CLI,
a script, a test). A client sends a run's context as a plain dict (a server run's `context` or `configurable`,
or `graph.invoke(..., context={...})`): LangGraph builds it through `ClientContext`, the graph's context schema,
so every entry point that takes a dict passes here. A client value that differs from the operator's for a
field outside the allow-list is refused with one error naming every such field, never silently dropped.

Allow-list: CRAGRAPH_CLIENT_SETTINGS, a comma-separated list of field names and these words:
  default   the built-in client set, `client_defaults()`: thresholds, weights, technique and stage switches
  *         every field (a single-user Studio on one's own machine)
  -name     remove a field (e.g. "default,-multihop")
Unset means "default"; empty means nothing. An unknown name is an error at the first run.
Operator fields by default (`operator_only()`): every string field (index, model specs and paths, web_base_url,
reader_path, templates) except `category_key`, every integer field (budgets: max_retrieval_rounds, retrieve_k,
pool and token limits), and web_search, web_search_depth, web_timeout_s, latency_budget_ms, debug, index_backend.
A budget the operator allows may be lowered by a client but never raised above the operator's own value.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, Literal, get_args, get_origin, get_type_hints

from cragraph.context import Context
from cragraph.inputs import shown

ALLOW_ENV = "CRAGRAPH_CLIENT_SETTINGS"

# Fields whose type alone would make them operator settings, but which steer nothing outside the run.
_CLIENT_EXCEPTIONS = frozenset({"category_key", "retrieval_rrf_k", "strip_min_chars"})
# Fields that reach outside the run (the paid web API, its wait, output size) though their type looks harmless.
_OPERATOR_EXTRAS = frozenset({"web_search", "web_search_depth", "web_timeout_s", "latency_budget_ms", "debug",
                              "index_backend"})  # which index answers is the operator's, like `index` itself
# Budgets a client may lower (when allowed) but never raise: integer limits and the web wait.
_EXTRA_BUDGETS = frozenset({"web_timeout_s"})


@cache
def _hints() -> dict[str, Any]:
    return get_type_hints(Context)


def field_names() -> tuple[str, ...]:
    return tuple(item.name for item in fields(Context) if item.init)


@cache
def operator_only() -> frozenset[str]:
    """Fields only the operator sets unless CRAGRAPH_CLIENT_SETTINGS names them."""
    hints = _hints()
    by_type = {name for name in field_names() if hints[name] in (str, int)}
    return frozenset((by_type - _CLIENT_EXCEPTIONS) | _OPERATOR_EXTRAS)


@cache
def budgets() -> frozenset[str]:
    """Limits a client may only lower: every integer field (counts, sizes, rounds) and the web timeout."""
    hints = _hints()
    return frozenset({n for n in field_names() if hints[n] is int} - _CLIENT_EXCEPTIONS | _EXTRA_BUDGETS)


def client_defaults() -> frozenset[str]:
    """The built-in client set: every field that is not an operator setting."""
    return frozenset(field_names()) - operator_only()


def allowed_fields(spec: str | None = None) -> frozenset[str]:
    """The fields clients may set, from `spec` or CRAGRAPH_CLIENT_SETTINGS (unset = the built-in set)."""
    raw = os.environ.get(ALLOW_ENV) if spec is None else spec
    if raw is None:
        return client_defaults()
    known = frozenset(field_names())
    allowed: set[str] = set()
    for word in (w.strip() for w in raw.split(",")):
        name = word.removeprefix("-").strip()
        if not word:
            continue
        if name in ("*", "default"):
            group = known if name == "*" else client_defaults()
        elif name in known:
            group = frozenset({name})
        else:
            raise ValueError(f"{ALLOW_ENV}: unknown Context field {name!r} (words: default, *, a field, -field)")
        if word.startswith("-"):
            allowed -= group
        else:
            allowed |= group
    return frozenset(allowed)


def check_types(context: Context) -> None:
    """Refuse a field whose value is not of its declared type (a client's {"rerank_k": "lots"}), a negative
    count, or a non-finite number, before any node compares or computes with it; ints are taken for floats."""
    hints = _hints()
    for name in field_names():
        value, kind = getattr(context, name), hints[name]
        if get_origin(kind) is Literal:
            allowed = get_args(kind)
            if value not in allowed:
                raise ValueError(f"Context.{name} must be one of {', '.join(map(repr, allowed))}, not {shown(value)}")
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"Context.{name} must be a number, not {shown(value)}")
            if not _finite(value):
                raise ValueError(f"Context.{name} must be a finite number, not {shown(value)}")
            setattr(context, name, float(value))
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"Context.{name} must be an integer, not {shown(value)}")
            if value < 0:
                raise ValueError(f"Context.{name} must be >= 0, not {value}")
        elif kind in (bool, str):
            if not isinstance(value, kind):
                raise TypeError(f"Context.{name} must be a {kind.__name__}, not {shown(value)}")
        elif get_origin(kind) is dict:
            if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
                raise TypeError(f"Context.{name} must be an object with string keys, not {shown(value)}")
            if get_args(kind)[1] is float and not all(
                isinstance(v, int | float) and not isinstance(v, bool) and _finite(v) for v in value.values()
            ):
                raise TypeError(f"Context.{name} must map names to finite numbers, not {shown(value)}")


def _finite(value: int | float) -> bool:
    """Whether a number is finite and fits a float (10**400 does not: float() raises OverflowError)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def refused_fields(context: Context, operator: Context, allowed: frozenset[str]) -> list[str]:
    """Why each field the client changed is not the client's to change (empty: all allowed)."""
    limits = budgets()
    refused = []
    for name in field_names():
        mine, theirs = getattr(context, name), getattr(operator, name)
        if mine == theirs:
            continue
        if name not in allowed:
            refused.append(f"{name} (an operator setting)")
        elif name in limits and mine > theirs:
            refused.append(f"{name}={mine!r} (above the server's limit {theirs!r})")
    return refused


def unknown_fields(names: Iterable[str]) -> str | None:
    """Why `names` are not all Context fields, each unknown one with the closest field ("multihopp" -> did you
    mean 'multihop'?), or None when all are known. A typo must not fall back silently to the default."""
    known = field_names()
    unknown = sorted(set(names) - set(known))
    if not unknown:
        return None
    named = []
    for name in unknown[:10]:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        named.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
    return f"unknown Context fields: {', '.join(named)}{more}"


class UnknownSetting(ValueError):
    """A caller named a setting that does not exist. A ValueError, so a LangGraph server returns its message."""


class SettingRefused(ValueError):
    """A client set a field the operator keeps. A ValueError, so a LangGraph server returns its message (it
    masks other exception types as "An internal error occurred")."""


@dataclass(kw_only=True, init=False)
class ClientContext(Context):
    """A run's context given as a dict, i.e. by a client: typed, and within the operator's allow-list.

    The operator's values are a fresh `Context()` (defaults and CRAGRAPH_* env). A value the client gives
    for an allowed field is kept even when it equals the field's default (a plain Context would let the env
    replace it). For an operator field, a value at its default counts as not given (the operator's value is
    used), so a client that sends Studio's whole form back unchanged is not refused; one that changes `index`
    or raises `max_retrieval_rounds` is, before any node runs.
    """

    def __init__(self, **values: Any) -> None:
        problem = unknown_fields(values)
        if problem:  # before the dataclass's own TypeError, which names one key and suggests nothing
            raise UnknownSetting(problem)
        self._given = frozenset(values)  # read by __post_init__, which Context's __init__ calls
        super().__init__(**values)

    @property
    def given(self) -> frozenset[str]:
        """The fields the client's dict named."""
        return self._given

    def __post_init__(self) -> None:
        check_types(self)
        given = {name: getattr(self, name) for name in self._given}
        super().__post_init__()
        allowed = allowed_fields()
        for name, value in given.items():
            if name in allowed:
                setattr(self, name, value)
        check_types(self)  # the operator's CRAGRAPH_* values too (e.g. a negative count)
        refused = refused_fields(self, Context(), allowed)
        if refused:
            raise SettingRefused(
                "this server does not let a client set: " + "; ".join(refused) + f". The operator allows "
                f'fields with {ALLOW_ENV} (e.g. "default,max_retrieval_rounds") and sets their values with '
                "CRAGRAPH_<FIELD> in the server's environment."
            )


def client_context(values: dict[str, Any]) -> ClientContext:
    """A client's dict as a checked context; an unknown field is refused by name, with the closest field."""
    return ClientContext(**values)


def checked_question(request: Mapping[str, Any]) -> str:
    """The run's question, stripped, after refusing what a caller can send but no node can take: a question
    that is not a non-empty string (e.g. 42), one with a lone surrogate, and filters or recommend_only of the
    wrong type. Each refusal is a ValueError naming the field (a server returns its message)."""
    question = request.get("question")
    if question is None:
        raise ValueError('no question: give {"question": "..."} or chat {"messages": [{"role": "user", ...}]}')
    if not isinstance(question, str):
        raise ValueError(f"the question must be a string, not {shown(question)}")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"the question has an invalid character at {error.start} (a lone surrogate)") from None
    if not question.strip():
        raise ValueError("the question is empty")
    filters = request.get("filters")
    if filters is not None and not (isinstance(filters, dict) and all(isinstance(k, str) for k in filters)):
        raise ValueError(f"filters must be an object of field: value, not {shown(filters)}")
    recommend_only = request.get("recommend_only", False)
    if not isinstance(recommend_only, bool):
        raise ValueError(f"recommend_only must be true or false, not {shown(recommend_only)}")
    return question.strip()
