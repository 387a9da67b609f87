"""Declaring a setting once, and checking a value against its declared type.

A setting is a dataclass field with a default and a description: the run's `Context` declares the per-run ones,
each stage's settings dataclass (gathered by `rag.config.Operator`) the operator's. The same parse and type
check serve both, so `--set`, a client's dict, the environment and the config file refuse a value in one way.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any, Literal, get_args, get_origin

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def setting(default: Any, description: str, **metadata: Any) -> Any:
    """A dataclass field with a default (copied per instance when mutable) and a description Studio shows."""
    meta = {"description": description, **metadata}
    if isinstance(default, dict | list):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


# LangGraph's templates (react-agent) mark chat-model fields so Studio offers its model picker for them.
STUDIO_MODEL_FIELD = {"__template_metadata__": {"kind": "llm"}}


def model_setting(default: str, description: str) -> Any:
    """A chat-model spec field (`provider:model`): a setting marked for Studio's model picker."""
    return setting(default, description, json_schema_extra=copy.deepcopy(STUDIO_MODEL_FIELD))


def default_of(item: dataclasses.Field[Any]) -> Any:
    """A field's default value (a fresh one for mutable defaults)."""
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return item.default


def shown(value: Any) -> str:
    """A caller's value as a message quotes it: its repr cut to 60 characters, and its type."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's 4300-digit limit for str()
        text = "(too long to show)"
    return f"{text[:60]}{'...' if len(text) > 60 else ''} ({type(value).__name__})"


def kind_text(kind: Any) -> str:
    """A setting's type as a person would write its value."""
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(map(str, get_args(kind)))
    names = {bool: "true or false", int: "an integer", float: "a number", str: "text"}
    return names.get(kind, "a JSON object")


def parse_text(raw: str, kind: Any) -> Any:
    """A setting's value from text (an environment variable, `--set`): ValueError saying what was expected."""
    text = raw.strip()
    if kind is bool:
        if text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        raise ValueError("expected true/false")
    if kind is int:
        return int(text)
    if kind is float:
        return float(text)
    if kind is str or get_origin(kind) is Literal:
        return raw
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object")
    return value


def checked(name: str, value: Any, kind: Any) -> Any:
    """`value` as the setting `name` of type `kind` takes it (an int becomes a float where a float is declared),
    or TypeError / ValueError naming the setting: a wrong type, a value outside a Literal, a negative count, a
    number that is not finite, a dict with non-string keys or (for dict[str, float]) non-numbers."""
    if get_origin(kind) is Literal:
        allowed = get_args(kind)
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, not {shown(value)}")
    elif kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{name} must be a number, not {shown(value)}")
        if not _finite(value):
            raise ValueError(f"{name} must be a finite number, not {shown(value)}")
        return float(value)
    elif kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an integer, not {shown(value)}")
        if value < 0:
            raise ValueError(f"{name} must be >= 0, not {value}")
    elif kind in (bool, str):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be a {kind.__name__}, not {shown(value)}")
    elif get_origin(kind) is dict:
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            raise TypeError(f"{name} must be an object with string keys, not {shown(value)}")
        if get_args(kind)[1] is float and not all(
            isinstance(v, int | float) and not isinstance(v, bool) and _finite(v) for v in value.values()
        ):
            raise TypeError(f"{name} must map names to finite numbers, not {shown(value)}")
    return value


def _finite(value: int | float) -> bool:
    """Whether a number is finite and fits a float (10**400 does not: float() raises OverflowError)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False
