"""What a run's caller may set: the Context fields a client may change, budget caps and type checks.

Two kinds of caller. The operator configures the process: the operator configuration (cragraph.toml and
CRAGRAPH_<SECTION>__<KEY>, `rag.config`), CRAGRAPH_<FIELD> environment variables for the run's defaults
(langgraph.json's "env", the shell that starts `cragraph serve`) and any `Context(...)` built in Python (the CLI, a
script, a test). A client sends a run's context as a plain dict (a server run's `context` or `configurable`, or
`graph.invoke(..., context={...})`): LangGraph builds it through `ClientContext`, the graph's context schema, so
every entry point that takes a dict passes here. Stage internals are not Context fields, so no client reaches
them; of the Context, a client may set every field except the few that choose folders, models or what the run
costs or shows (OPERATOR_ONLY), and may only lower a budget (BUDGETS). A client value that differs from the
operator's for a field outside the allow-list is refused with one error naming every such field.

Allow-list: CRAGRAPH_CLIENT_SETTINGS, a comma-separated list of field names and these words:
  default   the built-in client set, `client_defaults()`: every Context field but OPERATOR_ONLY
  *         every field (a single-user Studio on one's own machine)
  -name     remove a field (e.g. "default,-multihop")
Unset means "default"; empty means nothing. An unknown name is an error at the first run.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, get_type_hints

from rag.config.moved import moved_message
from rag.context import Context, UnknownSetting
from rag.settings import checked, shown

ALLOW_ENV = "CRAGRAPH_CLIENT_SETTINGS"

# Which documents answer (index, its backend and URI), which models read them, what the run may cost (the latency
# budget decides which LLM expansions run) and what it shows (debug keeps every stage's passages).
OPERATOR_ONLY = frozenset({"index", "index_backend", "index_uri", "evaluator", "chat_model", "latency_budget_ms",
                           "debug"})
# Limits a client may lower but never raise: re-retrieval rounds, and the paid web search (off, never on).
BUDGETS = frozenset({"max_retrieval_rounds", "web_search"})


@cache
def _hints() -> dict[str, Any]:
    return get_type_hints(Context)


def field_names() -> tuple[str, ...]:
    return tuple(item.name for item in fields(Context) if item.init)


def client_defaults() -> frozenset[str]:
    """The built-in client set: every field that is not an operator setting."""
    return frozenset(field_names()) - OPERATOR_ONLY


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
            moved = moved_message(name)
            raise ValueError(f"{ALLOW_ENV}: " + (moved or f"unknown Context field {name!r}") +
                             " (words: default, *, a field, -field)")
        if word.startswith("-"):
            allowed -= group
        else:
            allowed |= group
    return frozenset(allowed)


def check_types(context: Context) -> None:
    """Refuse a field whose value is not of its declared type (a client's {"max_retrieval_rounds": "lots"}), a
    negative count, or a non-finite number, before any node compares or computes with it; ints are taken for
    floats."""
    hints = _hints()
    for name in field_names():
        setattr(context, name, checked(f"Context.{name}", getattr(context, name), hints[name]))


def refused_fields(context: Context, operator: Context, allowed: frozenset[str]) -> list[str]:
    """Why each field the client changed is not the client's to change (empty: all allowed)."""
    refused = []
    for name in field_names():
        mine, theirs = getattr(context, name), getattr(operator, name)
        if mine == theirs:
            continue
        if name not in allowed:
            refused.append(f"{name} (an operator setting)")
        elif name in BUDGETS and mine > theirs:
            refused.append(f"{name}={mine!r} (above the server's limit {theirs!r})")
    return refused


def unknown_fields(names: Iterable[str]) -> str | None:
    """Why `names` are not all Context fields: a setting that moved to the operator configuration or was removed
    says where it lives now or what replaced it; any other unknown one is named with the closest field
    ("multihopp" -> did you mean 'multihop'?). None when all are known. A typo must not fall back silently."""
    known = field_names()
    unknown = sorted(set(names) - set(known))
    if not unknown:
        return None
    moved = [message for message in map(moved_message, unknown) if message]
    typos = [name for name in unknown if not moved_message(name)]
    named = []
    for name in typos[:10]:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        named.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    more = f" and {len(typos) - 10} more" if len(typos) > 10 else ""
    return "; ".join(moved + ([f"unknown Context fields: {', '.join(named)}{more}"] if typos else []))


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
                f'fields with {ALLOW_ENV} (e.g. "default,debug") and sets their values with '
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
