"""A thread of `{"question": ...}` runs over a corpus written for it: "what about the Austin office?" after
"Where was she born?" asks where the head of the Austin office was born, not where the office was born."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import build_graph
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator

OFFICES = [
    {"id": "berlin", "title": "Berlin office", "text": "Anna Schmidt is the head of the Berlin office."},
    {"id": "austin", "title": "Austin office", "text": "Carlos Ruiz is the head of the Austin office."},
    {"id": "anna", "title": "Anna Schmidt", "text": "Anna Schmidt was born in Hamburg."},
    {"id": "carlos", "title": "Carlos Ruiz", "text": "Carlos Ruiz was born in Monterrey."},
]


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("offices"), tiny_embedder_dir, OFFICES)


def test_what_about_the_other_office_asks_the_role_not_the_office(index, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    agent = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "offices"}}
    first = agent.invoke({"question": "Who is the head of the Berlin office?"}, config, context=context(index))
    assert "Anna Schmidt" in first["answer"], first["answer"]
    second = agent.invoke({"question": "Where was she born?"}, config, context=context(index))
    assert standalone(second) == "Where was Anna Schmidt born?"
    third = agent.invoke({"question": "What about the Austin office?"}, config, context=context(index))
    assert standalone(third) == "Where was the head of the Austin office born?"


def standalone(result: dict) -> str:
    """The question the run answered, as the conversation node's trace record says: "'asked' -> 'standalone'"."""
    record = result["trace"][0]
    assert record["node"] == "conversation", record
    return record["note"].split(" -> ", 1)[1].split("' (", 1)[0].strip("'")
