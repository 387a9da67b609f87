"""The CRAG agent as a LangGraph state machine: `from graph import graph`.

`graph` is built on first access (PEP 562), so `graph.context` and `graph.state` can be imported by nodes
without importing the builder, which imports the nodes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["graph"]


def __getattr__(name: str) -> Any:
    if name == "graph":
        from graph.builder import graph

        return graph
    raise AttributeError(f"module 'graph' has no attribute {name!r}")
