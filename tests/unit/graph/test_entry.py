"""A run's input and context are checked where the run enters (issue 45): each malformed one is one ValueError
that names what is accepted, not an error from inside LangGraph or LangChain (or, for a falsy context, nothing);
the inputs a chat client sends in its several shapes still run."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from graph import graph
from rag.context import Context
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator

ACCEPTED = r"a run takes \{\"question\""
MESSAGE = r"a message is \{\"role\": one of user"


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("entry-index"), tiny_embedder_dir)


@pytest.mark.parametrize(
    ("run_input", "message"),
    [
        (None, ACCEPTED),
        ("Which river?", ACCEPTED),
        (42, ACCEPTED),
        ([], ACCEPTED),
        ({"messages": 5}, r'"messages" must be a list of messages'),
        ({"messages": None}, r'"messages" must be a list of messages'),
        ({"messages": [None]}, rf"messages\[0\]: not a message: None.*{MESSAGE}"),
        ({"messages": [{"role": "tool"}]}, rf"messages\[0\]: role 'tool'.*{MESSAGE}"),
        ({"messages": [{"role": "user", "content": 5}]}, r"messages\[0\]: content must be text.*not 5"),
        ({"messages": [{"role": "user", "content": [5, None, "x"]}]}, r"content must be text or a list of text"),
        ({"messages": ["hi", {"role": "bogus", "content": "hi"}]}, r"messages\[1\]: role 'bogus' \(str\) is not"),
    ],
)
def test_a_malformed_input_is_refused_at_the_entry_naming_what_is_accepted(run_input, message):
    with pytest.raises(ValueError, match=message):
        graph.invoke(run_input, context=Context(index="/nonexistent"))


@pytest.mark.parametrize(
    ("run_context", "message"),
    [
        (5, r"context must be a Context or an object of Context fields .*not 5 \(int\)"),
        ("string", r"not 'string' \(str\)"),
        ([], r"not \[\] \(list\)"),
        (True, r"not True \(bool\)"),
        ({"answer_threshold": 10**400}, r"Context.answer_threshold must be a finite number"),
        ({"answer_threshold": -(10**5000)},
         r"Context.answer_threshold must be a finite number, not \(too long to show\)"),
        ({"class_alphas": {"who": 10**400}}, r"class_alphas is an operator setting now"),
        (Context(index=""), r"Context.index is empty: set it to the folder of an index"),
    ],
)
def test_a_malformed_context_is_refused_with_a_message(run_context, message):
    with pytest.raises((ValueError, TypeError), match=message):  # a wrong field type is a TypeError
        graph.invoke({"question": "Which river?"}, context=run_context)


@pytest.mark.parametrize(
    "run_input",
    [
        {"messages": [{"role": "user", "content": "Which river flows into the Caspian Sea?"}]},
        {"messages": [{"type": "human", "content": "Which river flows into the Caspian Sea?"}]},  # Studio's chat
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "Which river flows into the Caspian "
                                                                            "Sea?"}]}]},
        {"messages": "Which river flows into the Caspian Sea?"},
        {"messages": [HumanMessage("Which river flows into the Caspian Sea?")]},
    ],
)
def test_the_chat_shapes_a_client_sends_still_run(index, monkeypatch, run_input):
    use_keyword_evaluator(monkeypatch)
    result = graph.invoke(run_input, context=context(index))
    assert "Volga" in result["answer"], result["answer"]
