"""What several commands share: the default index folder and the metadata filter syntax."""

from __future__ import annotations

import os
from typing import Any

DEFAULT_INDEX = os.environ.get("CRAGRAPH_INDEX", ".cragraph/index")


def parse_filters(items: list[str]) -> dict[str, Any]:
    """KEY=VALUE -> equality, KEY=PREFIX* -> {"prefix": PREFIX}."""
    filters: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"bad filter {item!r}: expected KEY=VALUE or KEY=PREFIX*")
        filters[key] = {"prefix": value[:-1]} if value.endswith("*") else value
    return filters
