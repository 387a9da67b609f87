"""Where a run's settings come from, and what a mistake in them says (issue 16): a typo'd context key names the
closest field; a Context field in config["configurable"] is refused in Python instead of being ignored."""

from __future__ import annotations

import pytest

from graph import graph
from nodes._runtime import settings_of
from rag.policy import ClientContext, UnknownSetting, unknown_fields


def test_a_typo_in_a_context_dict_names_the_closest_field():
    with pytest.raises(UnknownSetting, match=r"unknown Context fields: 'multihopp' \(did you mean 'multihop'\?\)"):
        graph.invoke({"question": "Which river?"}, context={"multihopp": "always"})
    assert unknown_fields(["multihop", "xyzzy"]) == "unknown Context fields: 'xyzzy'"
    assert unknown_fields(["multihop", "review"]) is None


def test_a_context_field_in_configurable_is_refused_not_ignored():
    with pytest.raises(UnknownSetting, match=r"config\['configurable'\] sets index.*context=Context\(index=\.\.\.\)"):
        graph.invoke({"question": "Which river?"}, config={"configurable": {"index": "/elsewhere/idx"}})


def test_the_servers_mirror_of_the_context_in_configurable_is_accepted(monkeypatch):
    """A server copies a run's context into configurable: the same fields there are not a second source."""
    seen = {}

    def node(state, runtime):
        seen["threshold"] = settings_of(runtime).answer_threshold
        return {"answer": "ok"}

    from langgraph.graph import START, StateGraph

    from rag.state import State

    builder = StateGraph(State, context_schema=ClientContext)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    probe = builder.compile()
    probe.invoke({"question": "q"}, config={"configurable": {"answer_threshold": 0.3, "thread_id": "t"}},
                 context={"answer_threshold": 0.3})
    assert seen["threshold"] == 0.3
    with pytest.raises(UnknownSetting, match="sets multihop"):
        probe.invoke({"question": "q"}, config={"configurable": {"multihop": "never"}},
                     context={"answer_threshold": 0.3})
    with pytest.raises(UnknownSetting, match=r"sets upper is an operator setting now: set it in cragraph.toml"):
        probe.invoke({"question": "q"}, config={"configurable": {"upper": 0.1}}, context={"answer_threshold": 0.3})


def test_a_missing_index_is_a_valueerror_that_says_what_to_do_without_the_folders(tmp_path):
    from rag.context import Context
    from stores.bundle import BundleError

    missing = tmp_path / "nowhere" / "idx"
    with pytest.raises(ValueError, match=r"^no index at \.\.\./idx; build one with `cragraph index") as refused:
        graph.invoke({"question": "Which river?"}, context=Context(index=str(missing)))
    assert isinstance(refused.value, BundleError) and str(tmp_path) not in str(refused.value)
