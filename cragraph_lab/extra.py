"""The benchmark-only libraries (the `bench` extra), imported where a benchmark needs them.

The product runs without them; a benchmark started without the extra says which install brings them in.
"""

from __future__ import annotations

import importlib
from types import ModuleType

INSTALL = "pip install 'cragraph[bench]'"


def bench_import(module: str) -> ModuleType:
    """Import `module` (rank_bm25, langchain_community, langchain_classic, matplotlib ...) or raise an
    ImportError that names the bench extra."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{module} is used only by benchmarks and is not installed: {INSTALL}") from err
