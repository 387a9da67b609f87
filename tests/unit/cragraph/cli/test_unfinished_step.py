"""`ask --thread --resume` decides from the thread's last step whether a run is unfinished. A process killed after
a node's writes were stored but before the next checkpoint must still count as unfinished (the live view drops that
node and shows nothing left to run), and resuming it must not run the node again."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from cragraph.cli.agent import unfinished_step


class Steps(TypedDict, total=False):
    ran: list[str]


class Killed(Exception):
    """Stands for SIGKILL: the process dies before the checkpoint is stored."""


class DiesBeforeCheckpoint(InMemorySaver):
    """A real in-memory store that fails to store the checkpoint of step `die_at` (the node's writes are stored,
    as they are by a process killed in that window), while `die_at` is set."""

    die_at: int | None = None

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if metadata.get("step") == self.die_at:
            raise Killed
        return super().put(config, checkpoint, metadata, new_versions)


def _graph(calls: list[str]):
    def node(name: str):
        def run(state: Steps) -> Steps:
            calls.append(name)
            return {"ran": [*state.get("ran", []), name]}

        return run

    builder = StateGraph(Steps)
    for name in ("first", "second", "third"):
        builder.add_node(name, node(name))
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", "third")
    builder.add_edge("third", END)
    return builder.compile(checkpointer=DiesBeforeCheckpoint())


def test_a_step_whose_writes_were_stored_before_the_kill_is_still_unfinished_and_not_run_again() -> None:
    calls: list[str] = []
    agent = _graph(calls)
    config = {"configurable": {"thread_id": "t"}}
    agent.checkpointer.die_at = 2  # step 2: the checkpoint after second ran
    with pytest.raises(Killed):
        agent.invoke({"ran": []}, config, durability="sync")
    agent.checkpointer.die_at = None
    assert calls == ["first", "second"]
    calls.clear()

    assert agent.get_state(config).next == ()  # the live view: looks finished
    assert unfinished_step(agent, config) == ("second",)
    result = agent.invoke(None, config)
    assert result["ran"] == ["first", "second", "third"]
    assert calls == ["third"]
    assert unfinished_step(agent, config) == ()


def test_a_thread_with_no_checkpoint_has_nothing_unfinished() -> None:
    assert unfinished_step(_graph([]), {"configurable": {"thread_id": "none"}}) == ()
