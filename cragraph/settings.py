"""Declaring settings once: a stage's settings dataclass declares each field's default and description, and the
graph's flat `Context` mirrors the field under a prefix; `section` builds the stage's object back from Context.

So a default lives in one place (the stage's own dataclass, usable without the graph), Studio shows the same
description, and nothing hand-maps field names.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, TypeVar

Section = TypeVar("Section")


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


def section_field(kind: type, name: str) -> dataclasses.Field[Any]:
    """The dataclass field `name` of the settings class `kind` (KeyError naming both when it has none)."""
    for item in dataclasses.fields(kind):
        if item.name == name:
            return item
    raise KeyError(f"{kind.__name__} has no setting {name!r}")


def default_of(item: dataclasses.Field[Any]) -> Any:
    """A field's default value (a fresh one for mutable defaults)."""
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return item.default


def mirrored(kind: type, name: str) -> Any:
    """A Context field with the default, description and metadata that `kind` declares for `name`."""
    item = section_field(kind, name)
    return setting(default_of(item), item.metadata.get("description", ""),
                   **{k: v for k, v in item.metadata.items() if k != "description"})


def section(kind: type[Section], source: Any, prefix: str = "", **overrides: Any) -> Section:
    """`kind` built from `source`'s `<prefix><name>` attributes; a source without one keeps kind's default."""
    values: dict[str, Any] = {}
    for item in dataclasses.fields(kind):  # type: ignore[arg-type]
        if not item.init:
            continue
        if item.name in overrides:
            values[item.name] = overrides[item.name]
        elif hasattr(source, prefix + item.name):
            values[item.name] = copy.deepcopy(getattr(source, prefix + item.name))
    return kind(**values)


def prefixed(values: Any, prefix: str = "") -> dict[str, Any]:
    """The inverse of `section`: a settings object's fields as `<prefix><name>` keyword arguments."""
    return {prefix + item.name: copy.deepcopy(getattr(values, item.name))
            for item in dataclasses.fields(values) if item.init}
