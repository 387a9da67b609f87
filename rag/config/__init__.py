"""The operator configuration: every stage internal, declared once by its stage's settings dataclass, read once
per process from a TOML file and the environment, and handed to the nodes (the run's `Context` holds only what a
person changes per run).

Where values come from, later winning: the defaults declared here; the file named by CRAGRAPH_CONFIG, else
./cragraph.toml when there is one (a table per section: `[retrieval]` then `pool = 150`); environment variables
CRAGRAPH_<SECTION>__<KEY> (CRAGRAPH_RETRIEVAL__POOL=150). An unknown key or a wrong type is refused when the
configuration is first read, naming it. `cragraph config` prints every setting with its source.

In Python and tests, `with operator_config(rerank={"k": 8}):` runs with changed values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

from rag.config.load import Loaded, load
from rag.config.operator import SECTIONS, ConfigError, Operator

__all__ = ["SECTIONS", "ConfigError", "Loaded", "Operator", "loaded", "operator", "operator_config", "reload"]

_override: list[Operator] = []


def operator() -> Operator:
    """The process's operator configuration (read once), or the one an `operator_config` block runs with."""
    return _override[-1] if _override else loaded().config


@cache
def loaded() -> Loaded:
    """The configuration read from the file and the environment, with each value's source (cached)."""
    return load()


def reload() -> Loaded:
    """Read the file and the environment again (after changing them)."""
    loaded.cache_clear()
    return loaded()


@contextmanager
def operator_config(config: Operator | None = None, **sections: Mapping[str, Any]) -> Iterator[Operator]:
    """Run the block with `config`, or the current configuration with `sections` changed."""
    chosen = (config or operator()).changed(**sections)
    _override.append(chosen)
    try:
        yield chosen
    finally:
        _override.pop()
