"""Issue 16 through a real `langgraph dev` and langgraph-sdk: the chat convention (a messages input, the answer
on the messages stream, a follow-up on the thread) and human review (a run paused by interrupt(), a bad resume
refused with a message, an edit that becomes the answer)."""

from __future__ import annotations

import asyncio

import pytest

from tests.fixtures.graph import DIRECTOR, FOLLOW_UP, KAPITSA_DOCS, build_tiny_index
from tests.fixtures.server import tiny_dev_server

pytestmark = pytest.mark.server

# The tiny embedder's cosines are random: every grade correct, every sentence kept, the reader always answers
# (the server's own thresholds make every grade incorrect).
LENIENT = {"answer_threshold": 0.0}  # with the server's grade thresholds at -1 (LENIENT_ENV)
LENIENT_ENV = {"CRAGRAPH_GRADE__UPPER": "-1.0", "CRAGRAPH_GRADE__LOWER": "-1.0"}


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_embedder_dir):
    folder = tmp_path_factory.mktemp("chat-server")
    with tiny_dev_server(folder, build_tiny_index(folder, tiny_embedder_dir, KAPITSA_DOCS), tiny_embedder_dir,
                         **LENIENT_ENV) as url:
        yield url


def test_a_chat_thread_streams_the_answer_message_and_resolves_a_follow_up(server):
    asyncio.run(_chat(server))


async def _chat(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    thread = (await client.threads.create())["thread_id"]
    first, first_messages = await _chat_turn(client, thread, assistant_id, DIRECTOR)
    assert first["answer"] and not first["abstained"]
    (streamed, metadata), = first_messages  # the answer's message, from the respond node
    assert streamed["type"] in ("ai", "AIMessageChunk") and streamed["content"] == first["answer"]
    assert metadata["langgraph_node"] == "respond"
    assert streamed["additional_kwargs"]["citations"] == first["citations"]

    second, _ = await _chat_turn(client, thread, assistant_id, FOLLOW_UP)
    record = second["trace"][0]
    assert record["node"] == "conversation" and record["decision"] == "follow-up (rule)", record
    standalone = second["messages"][-1]["additional_kwargs"]["question"]
    assert "he" not in standalone.split() and standalone.startswith("Where was "), standalone
    assert f"{FOLLOW_UP!r} -> {standalone!r}" in record["note"]
    nodes = [r["node"] for r in second["trace"]]
    assert nodes.count("understand") == 1 and nodes.count("answer") == 1, nodes
    state = (await client.threads.get_state(thread))["values"]
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "human", "ai"]
    assert state["messages"][2]["content"] == FOLLOW_UP and state["messages"][3]["content"] == second["answer"]


async def _chat_turn(client, thread: str, assistant_id: str, text: str) -> tuple[dict, list]:
    """One user message on the thread; the final values and the AI messages the messages stream carried."""
    values, messages = None, []
    async for part in client.runs.stream(
        thread, assistant_id, input={"messages": [{"role": "user", "content": text}]}, context=LENIENT,
        stream_mode=["messages-tuple", "values"],
    ):
        assert part.event != "error", part.data
        if part.event == "values":
            values = part.data
        elif part.event == "messages":
            message, metadata = part.data
            if message.get("type") in ("ai", "AIMessageChunk"):
                messages.append((message, metadata))
    assert values is not None
    return values, messages


def test_review_before_the_answer_pauses_and_takes_a_resume(server):
    asyncio.run(_review(server))


async def _review(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    thread = (await client.threads.create())["thread_id"]
    context = {**LENIENT, "review": "before_answer"}
    await client.runs.wait(thread, assistant_id, input={"question": DIRECTOR}, context=context)
    pause = await _interrupt(client, thread)
    assert pause["review"] == "before_answer" and pause["question"] == DIRECTOR and pause["answer"]
    assert set(pause["actions"]) == {"approve", "edit", "reject"}

    await client.runs.wait(thread, assistant_id, command={"resume": {"action": "ship it"}}, context=context)
    assert "unknown action 'ship it'" in (await _interrupt(client, thread))["error"]

    done = await client.runs.wait(thread, assistant_id, context=context,
                                  command={"resume": {"action": "edit", "answer": "Pyotr Kapitsa [1]"}})
    assert done["answer"] == "Pyotr Kapitsa [1]" and done["trace"][-1]["decision"] == "edit: answer replaced"
    assert not (await client.threads.get(thread)).get("interrupts")


async def _interrupt(client, thread: str) -> dict:
    """The value of the thread's one pending interrupt."""
    state = await client.threads.get_state(thread)
    pending = [i for task in state["tasks"] for i in task.get("interrupts", [])]
    assert len(pending) == 1, state["tasks"]
    return pending[0]["value"]
