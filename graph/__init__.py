"""The CRAG agent as a LangGraph state machine: `from graph import graph`."""

from graph.builder import graph

__all__ = ["graph"]
