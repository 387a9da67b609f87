"""The compiled graph's input and output JSON schemas (what a server's assistants.get_schemas returns and
Studio builds its input form from), and the per-run trace on a thread with a checkpointer (issue 16)."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph import graph
from graph.builder import build_graph
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator


def test_input_and_output_json_schemas_are_produced():
    """On Python < 3.12 pydantic refuses typing.TypedDict; the state must use typing_extensions' one."""
    inputs = graph.get_input_jsonschema()
    assert not inputs.get("required")  # a question or chat messages: either will do
    assert {"question", "messages", "filters", "recommend_only"} <= set(inputs["properties"])
    outputs = graph.get_output_jsonschema()
    assert {"answer", "citations", "verdict", "trace", "abstained"} <= set(outputs["properties"])
    for subgraph_name, subgraph in graph.get_subgraphs():
        assert "question" in subgraph.get_input_jsonschema()["properties"], subgraph_name
        assert subgraph.get_output_jsonschema()["properties"], subgraph_name


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("schema-index"), tiny_embedder_dir)


def test_a_second_question_on_a_thread_returns_only_its_own_trace(index, monkeypatch):
    """With a checkpointer the thread keeps `trace` between runs; each run's output holds that run's records."""
    use_keyword_evaluator(monkeypatch)
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    threaded = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    settings = context(index, debug=True)
    first = threaded.invoke({"question": "Which river flows into the Caspian Sea?"}, config, context=settings)
    assert first["verdict"] == "correct" and "refine" in first["debug"]
    second_question = "What is the population of Tokyo Japan?"
    second = threaded.invoke({"question": second_question}, config, context=settings)
    assert second["verdict"] == "incorrect"
    for result in (first, second):
        nodes = [record["node"] for record in result["trace"]]
        assert nodes[0] == "understand" and nodes.count("understand") == 1, nodes
        assert nodes[-1] == "answer" and nodes.count("answer") == 1, nodes
    alone = threaded.invoke({"question": second_question}, {"configurable": {"thread_id": "t2"}}, context=settings)
    assert set(second["debug"]) == set(alone["debug"]), "the debug channel kept the first run's keys"
    assert threaded.get_state(config).values["trace"] == second["trace"]


def test_chat_model_fields_carry_studios_model_picker_marker():
    """Studio shows its model picker for fields marked as react-agent marks them; only chat-model specs are."""
    properties = graph.get_context_jsonschema()["properties"]
    marked = {name for name, spec in properties.items() if spec.get("__template_metadata__") == {"kind": "llm"}}
    assert marked == {"chat_model"}  # the stage models are the operator's ([models] in cragraph.toml)
