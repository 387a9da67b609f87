"""The chat convention (a `messages` channel, follow-ups on a thread, the answer on the messages stream) and
human review (interrupt, then Command(resume=...)) through the whole graph on a tiny index (issue 16)."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import models.structured
from graph import graph
from graph.builder import build_graph
from models.scripted import ScriptedChatModel
from tests.fixtures.graph import (
    DIRECTOR,
    FOLLOW_UP,
    IN_CORPUS,
    KAPITSA_DOCS,
    OFF_CORPUS,
    WEB_RESULT,
    build_tiny_index,
    cites_the_volga,
    context,
    names_the_volga,
    use_keyword_evaluator,
)
from tests.fixtures.tavily_stub import TavilyStub


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("chat-index"), tiny_embedder_dir, KAPITSA_DOCS)


@pytest.fixture(autouse=True)
def _keyword_evaluator(monkeypatch):
    use_keyword_evaluator(monkeypatch)
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)


def user(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def threaded():
    return build_graph().compile(checkpointer=InMemorySaver())


def test_messages_input_is_answered_with_an_ai_message_carrying_the_citations(index):
    result = graph.invoke(user(IN_CORPUS), context=context(index))
    assert names_the_volga(result["answer"]), result["answer"]
    asked, answered = result["messages"]
    assert isinstance(asked, HumanMessage) and asked.content == IN_CORPUS
    assert isinstance(answered, AIMessage) and answered.content == result["answer"]
    assert answered.additional_kwargs["citations"] == result["citations"]
    assert answered.additional_kwargs["evidence"] == result["evidence"]
    assert [r["node"] for r in result["trace"]][0] == "understand"  # no follow-up: nothing to record


def test_a_question_input_keeps_its_output_without_messages(index):
    result = graph.invoke({"question": IN_CORPUS}, context=context(index))
    assert names_the_volga(result["answer"]) and not result.get("messages"), result["answer"]
    json.dumps(result)


def test_a_follow_up_on_a_chat_thread_is_resolved_against_the_previous_turn(index):
    agent = threaded()
    config = {"configurable": {"thread_id": "chat"}}
    first = agent.invoke(user(DIRECTOR), config, context=context(index))
    assert first["answer"].startswith("Pyotr Kapitsa"), first["answer"]
    second = agent.invoke(user(FOLLOW_UP), config, context=context(index))
    record = second["trace"][0]
    assert record["node"] == "conversation" and record["decision"] == "follow-up (rule)"
    assert "Where was Pyotr Kapitsa born?" in record["note"] and FOLLOW_UP in record["note"]
    nodes = [r["node"] for r in second["trace"]]
    assert nodes.count("understand") == 1 and nodes.count("answer") == 1, nodes  # this run's records only
    assert "Kronstadt" in second["answer"] and second["citations"][0]["doc_id"] == "kapitsa"
    assert [type(m).__name__ for m in second["messages"]] == ["HumanMessage", "AIMessage"] * 2
    assert second["messages"][2].content == FOLLOW_UP  # the user's words stay as written
    assert second["messages"][3].additional_kwargs["question"] == "Where was Pyotr Kapitsa born?"


def test_a_follow_up_asked_as_question_on_a_thread_uses_the_last_turn(index):
    agent = threaded()
    config = {"configurable": {"thread_id": "questions"}}
    agent.invoke({"question": DIRECTOR}, config, context=context(index))
    second = agent.invoke({"question": FOLLOW_UP}, config, context=context(index))
    assert second["trace"][0]["node"] == "conversation"
    assert "Kronstadt" in second["answer"] and not second.get("messages")
    alone = graph.invoke({"question": FOLLOW_UP}, context=context(index))  # no thread: nothing to lean on
    assert alone["trace"][0]["node"] == "understand"


def test_the_llm_rewrites_a_follow_up_when_asked_and_the_rule_answers_for_a_bad_reply(index, monkeypatch):
    model = ScriptedChatModel(responses=['{"question": "Where was Pyotr Kapitsa born?"}', "no json here"])
    monkeypatch.setattr(models.structured, "load_chat_model", lambda spec: model)
    agent = threaded()
    config = {"configurable": {"thread_id": "llm"}}
    agent.invoke(user(DIRECTOR), config, context=context(index))
    second = agent.invoke(user("Where did that man come into the world?"), config,
                          context=context(index, llm_followup=True))
    assert second["trace"][0]["decision"] == "follow-up (llm)" and "Kronstadt" in second["answer"]
    assert "Pyotr Kapitsa" in model.prompts[0] and "Where did that man come into the world?" in model.prompts[0]
    third = agent.invoke(user("and when was it founded?"), config, context=context(index, llm_followup=True))
    record = third["trace"][0]
    assert record["decision"] == "follow-up (rule)" and "LLM follow-up rewrite refused" in record["note"]


def test_the_answer_message_is_on_the_messages_stream(index):
    chunks = list(graph.stream(user(IN_CORPUS), context=context(index), stream_mode="messages"))
    answers = [(m, meta) for m, meta in chunks if isinstance(m, AIMessage)]
    assert len(answers) == 1, chunks
    message, metadata = answers[0]
    assert names_the_volga(message.content) and metadata["langgraph_node"] == "respond", message.content


def test_review_before_the_answer_pauses_refuses_a_bad_resume_and_takes_an_edit(index):
    agent = threaded()
    config = {"configurable": {"thread_id": "review"}}
    settings = context(index, review="before_answer")
    paused = agent.invoke(user(IN_CORPUS), config, context=settings)
    (pause,) = paused["__interrupt__"]
    assert pause.value["review"] == "before_answer" and names_the_volga(pause.value["answer"]), pause.value
    assert cites_the_volga(pause.value["citations"])
    again = agent.invoke(Command(resume={"action": "publish"}), config, context=settings)
    (pause,) = again["__interrupt__"]
    assert "unknown action 'publish'" in pause.value["error"] and "approve, edit, reject" in pause.value["error"]
    again = agent.invoke(Command(resume={"action": "edit"}), config, context=settings)
    assert "needs the new text" in again["__interrupt__"][0].value["error"]
    done = agent.invoke(Command(resume={"action": "edit", "answer": "The Volga river [1]"}), config, context=settings)
    assert "__interrupt__" not in done
    assert done["answer"] == "The Volga river [1]" and done["messages"][-1].content == "The Volga river [1]"
    assert done["trace"][-1]["node"] == "review" and done["trace"][-1]["decision"] == "edit: answer replaced"

    rejected = threaded()
    rejected.invoke({"question": IN_CORPUS}, config, context=settings)
    result = rejected.invoke(Command(resume="reject"), config, context=settings)
    assert result["abstained"] is True and result["citations"] == []


@pytest.mark.parametrize(("action", "searched"), [("approve", True), ("skip", False), ("reject", False)])
def test_review_before_the_web_search(index, monkeypatch, action, searched):
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")
    agent = threaded()
    config = {"configurable": {"thread_id": f"web-{action}"}}
    with TavilyStub([WEB_RESULT]) as stub:
        # without the web, the passages graded incorrect are read: at the default threshold nothing is given
        settings = context(index, web_search=True, review="before_web", answer_threshold=0.0 if searched else 0.5,
                           operator={"web": {"base_url": stub.url}})
        paused = agent.invoke({"question": OFF_CORPUS}, config, context=settings)
        (pause,) = paused["__interrupt__"]
        assert pause.value["review"] == "before_web" and pause.value["verdict"] == "incorrect"
        assert pause.value["question"] == OFF_CORPUS and pause.value["passages"]
        assert not stub.requests  # nothing left for the web before the person said so
        result = agent.invoke(Command(resume={"action": action}), config, context=settings)
    assert bool(stub.requests) is searched
    assert ("14 million" in result["answer"]) is searched
    assert result["abstained"] is not searched
    assert any(r["node"] == "review" and r["decision"].startswith(action) for r in result["trace"])


def test_review_without_a_checkpointer_is_refused_naming_the_fix(index):
    with pytest.raises(ValueError, match="needs a checkpointer") as refused:
        graph.invoke({"question": IN_CORPUS}, context=context(index, review="before_web"))
    assert "InMemorySaver" in str(refused.value) and "langgraph dev" in str(refused.value)


def test_with_an_llm_answer_the_models_reply_streams_from_the_answer_step_before_the_message(index, monkeypatch):
    reply = ('{"answerable": true, "answer": "The Volga [1].", "citations": [1], '
             '"evidence": ["It flows into the Caspian Sea."]}')
    model = ScriptedChatModel(responses=[reply])
    monkeypatch.setattr(models.structured, "load_chat_model", lambda spec: model)
    chunks = list(graph.stream(user(IN_CORPUS), context=context(index, llm_answer=True), stream_mode="messages"))
    by_node = [(meta["langgraph_node"], message.content) for message, meta in chunks]
    assert ("answer", reply) in by_node, by_node  # the chat model's own output, as the answer step produced it
    assert by_node[-1] == ("respond", "The Volga [1].")


def test_a_transcript_sent_without_a_thread_resolves_its_follow_up(index):
    transcript = [{"role": "user", "content": DIRECTOR}, {"role": "assistant", "content": "Pyotr Kapitsa [1]"},
                  {"role": "user", "content": FOLLOW_UP}]
    result = graph.invoke({"messages": transcript}, context=context(index))
    assert "Where was Pyotr Kapitsa born?" in result["trace"][0]["note"] and "Kronstadt" in result["answer"]
    assert len(result["messages"]) == 4


def test_a_held_back_answer_reaches_the_chat_and_does_not_outlive_its_run(index):
    chat = threaded()
    config = {"configurable": {"thread_id": "withheld"}}
    doubtful = chat.invoke(user(IN_CORPUS), config=config, context=context(index, answer_threshold=1.0))
    held = doubtful["withheld"]
    assert doubtful["abstained"] and held["answer"].endswith("[1]") and held["confidence"] < 1.0
    assert doubtful["messages"][-1].additional_kwargs["withheld"] == held
    sure = chat.invoke(user(IN_CORPUS), config=config, context=context(index))
    assert not sure["abstained"] and sure["withheld"] is None
    assert "withheld" not in sure["messages"][-1].additional_kwargs
