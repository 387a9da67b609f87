"""Issue 14: a run's state does not grow without bound with its loop: the trace (the only channel that loop
rounds append to) keeps at most TRACE_LIMIT records, and a checkpointed long run stays the same size."""

from __future__ import annotations

import json
import os
import resource
import time

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from graph import graph
from graph.builder import build_graph
from rag.policy import SettingRefused
from rag.state import NOTE_LIMIT, TRACE_LIMIT, StageTimer, append_trace
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator

OFF_CORPUS = "What is the population of Tokyo Japan?"


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("bounds-index"), tiny_embedder_dir)


def test_a_long_re_retrieval_loop_keeps_the_state_bounded(index, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    checkpointed = build_graph().compile(checkpointer=InMemorySaver())
    sizes = {}
    for rounds in (40, 80):
        config = {"configurable": {"thread_id": f"rounds-{rounds}"}, "recursion_limit": 10_000}
        settings = context(index, max_retrieval_rounds=rounds, answer_threshold=0.5,
                           operator={"grade": {"upper": 1.0, "lower": 1.0}})  # always re-retrieve
        result = checkpointed.invoke({"question": OFF_CORPUS}, config, context=settings)
        trace = result["trace"]
        assert len(trace) == TRACE_LIMIT
        assert trace[0]["decision"] == "truncated"
        assert trace[0]["counts"]["dropped"] == 5 * rounds + 10 - (TRACE_LIMIT - 1)  # 10 + 5 a round, all counted
        assert trace[-1]["node"] == "answer" and result["abstained"]
        sizes[rounds] = len(json.dumps(checkpointed.get_state(config).values, default=str))
    assert sizes[80] < 1.05 * sizes[40], sizes  # twice the rounds, the same state


def test_the_trace_reducer_and_long_notes():
    records = [{"node": str(i), "decision": "x", "counts": {}} for i in range(TRACE_LIMIT + 10)]
    kept = append_trace(records[:TRACE_LIMIT], records[TRACE_LIMIT:])
    assert len(kept) == TRACE_LIMIT and kept[-1]["node"] == str(TRACE_LIMIT + 9)
    again = append_trace(kept, records[:5])
    assert again[0]["counts"]["dropped"] == kept[0]["counts"]["dropped"] + 5 and len(again) == TRACE_LIMIT
    assert append_trace(None, records[:3]) == records[:3]
    entry = StageTimer("retrieve").record("ok", note="query " + "x" * 100_000)
    assert len(entry["note"]) == NOTE_LIMIT


@pytest.mark.skipif(not os.environ.get("CRAGRAPH_MEASURE"), reason="a measurement: set CRAGRAPH_MEASURE=1")
def test_measure_the_unbounded_loop_of_issue_14(index, monkeypatch):
    """The issue's probe: max_retrieval_rounds=10**9 with thresholds that always re-retrieve. A client's run is
    refused; an operator's runs until LangGraph's recursion limit with a bounded state. Prints the figures."""
    use_keyword_evaluator(monkeypatch)
    for name, value in (("INDEX", str(index)), ("EVALUATOR", "cosine"), ("WEB_SEARCH", "false")):
        monkeypatch.setenv(f"CRAGRAPH_{name}", value)
    started = time.perf_counter()
    with pytest.raises(SettingRefused):
        graph.invoke(
            {"question": OFF_CORPUS},
            {"recursion_limit": 10_000},
            context={"max_retrieval_rounds": 10**9, "upper": 1.0, "lower": 1.0},
        )
    print(f"\nclient max_retrieval_rounds=10**9: refused in {(time.perf_counter() - started) * 1000:.1f} ms")
    checkpointed = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "probe"}, "recursion_limit": 10_000}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with pytest.raises(GraphRecursionError):
        checkpointed.invoke(
            {"question": OFF_CORPUS}, config, context=context(index, max_retrieval_rounds=10**9,
                                                              operator={"grade": {"upper": 1.0, "lower": 1.0}})
        )
    state = checkpointed.get_state(config).values
    size = len(json.dumps(state, default=str))
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
    print(
        f"operator max_retrieval_rounds=10**9: {state['retrieval_round']} rounds in "
        f"{time.perf_counter() - started:.1f} s until recursion_limit 10000; trace {len(state['trace'])} "
        f"records; last checkpoint {size} bytes; max RSS +{grown:.0f} MB"
    )
    assert len(state["trace"]) == TRACE_LIMIT and size < 100_000


@pytest.mark.parametrize(
    ("settings", "sub_questions", "says"),
    [
        ({"max_retrieval_rounds": 0}, 5, "max_retrieval_rounds"),
        ({"multihop": "always"}, 0, "max_sub_questions=0"),
        ({"max_retrieval_rounds": 0, "multihop": "always"}, 0, "=0: no"),
    ],
)
def test_a_budget_of_zero_means_none_and_the_run_finishes_at_once_saying_so(index, monkeypatch, settings,
                                                                             sub_questions, says):
    """Issue 45: a budget of 0 looped until GraphRecursionError (limit 10007, 22-39 s). It means "none"."""
    use_keyword_evaluator(monkeypatch)
    started = time.perf_counter()
    result = graph.invoke({"question": OFF_CORPUS}, {"recursion_limit": 60},
                          context=context(index, **settings, operator={  # always re-retrieve
                              "grade": {"upper": 1.0, "lower": 1.0}, "multihop": {"max_sub_questions": sub_questions}}))
    assert time.perf_counter() - started < 30
    assert result["answer"] and says in json.dumps(result["trace"]), result["trace"]
    nodes = [record["node"] for record in result["trace"]]
    assert "decompose" not in nodes and ("rewrite" not in nodes or settings.get("max_retrieval_rounds") != 0), nodes
