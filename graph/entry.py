"""The compiled graph with each run's input and context checked where the run enters (rag/inputs.py).

`stream` and `astream` are the doors: invoke and ainvoke go through them, and so do a LangGraph server's runs
(astream, astream_events). Checked there, a wrong input or context is one ValueError naming what is accepted,
raised before LangGraph maps the input onto channels (where a non-dict input or a malformed message fails
inside the library) or drops a falsy context such as [] silently.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph

from rag.context import Context
from rag.inputs import check_context, check_input
from rag.state import InputState, OutputState, State


class EntryCheckedGraph(CompiledStateGraph[State, Context, InputState, OutputState]):
    """A CompiledStateGraph whose runs are checked on entry; built by `entry_checked`."""

    def stream(self, input: Any, config: Any = None, *, context: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        _check(input, config, context)
        return super().stream(input, config, context=context, **kwargs)

    def astream(self, input: Any, config: Any = None, *, context: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        _check(input, config, context)
        return super().astream(input, config, context=context, **kwargs)


def entry_checked(compiled: CompiledStateGraph[State, Context, InputState, OutputState]) -> EntryCheckedGraph:
    """The same compiled graph (nodes, channels, checkpointer) with its runs checked on entry."""
    return EntryCheckedGraph(**{key: value for key, value in vars(compiled).items() if key != "__orig_class__"})


def _check(input: Any, config: Any, context: Any) -> None:
    configurable = (config.get("configurable") or {}) if isinstance(config, dict) else {}
    check_input(input, resumable="thread_id" in configurable)
    check_context(context)
