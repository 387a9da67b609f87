"""`langgraph dev` serves the graph offline: start it, drive it with langgraph-sdk, stop it.

The server runs in its own process group on a free port with analytics, version check and tracing off, over a
small index built with the tiny test embedder (the graph's nodes only need an index and its embedder).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from tests.fixtures.graph import build_tiny_index
from tests.fixtures.server import tiny_dev_server

pytestmark = pytest.mark.server
NODES = ["understand", "route", "multihop", "retrieve", "rerank", "grade", "refine", "web_search", "rewrite", "select",
         "answer"]


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_embedder_dir):
    folder = tmp_path_factory.mktemp("server")
    index = build_tiny_index(folder, tiny_embedder_dir)
    with tiny_dev_server(folder, index, tiny_embedder_dir) as url:
        yield url


@pytest.fixture(scope="module")
def open_server(tmp_path_factory, tiny_embedder_dir):
    """A single-user server (CRAGRAPH_CLIENT_SETTINGS=*): a client may set every field, the index included; its
    operator grade thresholds at -1 grade every passage correct."""
    folder = tmp_path_factory.mktemp("open-server")
    index = build_tiny_index(folder, tiny_embedder_dir)
    with tiny_dev_server(folder, index, tiny_embedder_dir, CRAGRAPH_CLIENT_SETTINGS="*",
                         CRAGRAPH_GRADE__UPPER="-1.0", CRAGRAPH_GRADE__LOWER="-1.0") as url:
        yield url


def test_stream_a_run_read_history_and_draw_the_graph(server):
    asyncio.run(_drive(server))


async def _drive(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistants = await client.assistants.search(graph_id="cragraph")
    assert assistants, "the cragraph graph is not registered"
    assistant_id = assistants[0]["assistant_id"]
    thread = await client.threads.create()
    question = {"question": "What is the population of Tokyo Japan?"}
    seen_nodes, final_values = await _stream(client, thread["thread_id"], assistant_id, question, None)
    expected_path = {"understand", "route", "retrieve", "rerank", "grade", "web_search", "rewrite", "select", "answer"}
    assert expected_path <= seen_nodes, seen_nodes
    assert final_values["verdict"] == "incorrect" and final_values["abstained"] is True
    assert [e["node"] for e in final_values["trace"]].count("retrieve") == 2  # the budget from the server env
    assert final_values["trace"][5]["decision"] == "off"  # CRAGRAPH_WEB_SEARCH=false reached the nodes

    history = await client.threads.get_history(thread["thread_id"])
    assert len(history) >= 8
    assert history[0]["values"]["answer"] == final_values["answer"]
    assert any(state["next"] == ["grade"] for state in history)

    async with httpx.AsyncClient() as http:  # the drawing endpoint, as Studio fetches it
        drawing = (await http.get(f"{url}/assistants/{assistant_id}/graph")).json()
    drawn = {node["id"] for node in drawing["nodes"]}
    assert set(NODES) <= drawn, drawn


def test_correct_passages_are_refined_and_a_planned_question_streams_its_subgraph(open_server):
    asyncio.run(_correct_and_planned(open_server))


async def _correct_and_planned(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    other = await client.threads.create()
    correct_nodes, correct_values = await _stream(
        client, other["thread_id"], assistant_id, {"question": "Which river flows into the Caspian Sea?"}, None)
    assert correct_values["verdict"] == "correct" and "refine" in correct_nodes

    planned = await client.threads.create()
    planned_nodes, planned_values = await _stream(
        client,
        planned["thread_id"],
        assistant_id,
        {"question": "Which river flows into the Caspian Sea?"},
        # the planned evidence is graded too; the reader's confidence on the tiny index is not under test
        {"multihop": "always", "answer_threshold": 0.0},
    )
    assert {"multihop", "grade", "select", "answer"} <= planned_nodes
    assert {"decompose", "validate", "compile", "translate", "execute"} <= planned_nodes  # the subgraph streams
    assert planned_values["citations"]
    assert {"refine", "multihop"} <= correct_nodes | planned_nodes


async def _stream(client, thread_id: str, assistant_id: str, payload: dict, context: dict | None):
    """Stream one run (values + updates, subgraphs on); the nodes that sent updates and the last values."""
    nodes: set[str] = set()
    values = None
    async for part in client.runs.stream(
        thread_id,
        assistant_id,
        input=payload,
        context=context,
        stream_mode=["values", "updates"],
        stream_subgraphs=True,
    ):
        assert part.event != "error", part.data
        if part.event.startswith("updates") and isinstance(part.data, dict):
            nodes.update(part.data)
        elif part.event.startswith("values"):
            values = part.data
    assert values is not None
    return nodes, values


def test_a_client_is_refused_operator_settings_with_a_clear_error(server):
    """Issue 14: a client's `index`, web search the server has off, or a budget above the server's is refused
    before any node runs; the error names the field and says how the operator allows it."""
    asyncio.run(_refused(server))


async def _refused(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    for context, field in (
        ({"web_search": True}, "web_search=True (above the server's limit False)"),
        ({"index": "../other/idx"}, "index (an operator setting)"),
        ({"max_retrieval_rounds": 10**9}, "max_retrieval_rounds=1000000000 (above the server's limit 1)"),
        ({"max_retrieval_rounds": "lots"}, "Context.max_retrieval_rounds must be an integer"),
    ):
        thread = await client.threads.create()
        errors = [
            part.data
            async for part in client.runs.stream(
                thread["thread_id"], assistant_id, input={"question": "Which river?"}, context=context
            )
            if part.event == "error"
        ]
        message = errors[0].get("message", "") if errors and isinstance(errors[0], dict) else str(errors)
        assert field in message, (context, errors)
        assert "CRAGRAPH_CLIENT_SETTINGS" in message or "must be" in message
    thread = await client.threads.create()
    errors = [
        part.data
        async for part in client.runs.stream(thread["thread_id"], assistant_id, input={"question": 42})
        if part.event == "error"
    ]
    assert errors and "the question must be a string, not 42 (int)" in str(errors[0]), errors


def test_schemas_are_served_and_a_threads_second_run_has_its_own_trace(server):
    """Issue 16: assistants.get_schemas returns the input and output schemas (Studio's input form), and a second
    question on the same thread returns that run's trace only."""
    asyncio.run(_schemas_and_thread(server))


async def _schemas_and_thread(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    schemas = await client.assistants.get_schemas(assistant_id)
    inputs = schemas["input_schema"]
    assert inputs and not inputs.get("required") and {"question", "messages"} <= set(inputs["properties"]), inputs
    assert {"answer", "citations", "trace"} <= set(schemas["output_schema"]["properties"])
    assert "answer_threshold" in schemas["context_schema"]["properties"]
    assert schemas["context_schema"]["properties"]["chat_model"]["__template_metadata__"] == {"kind": "llm"}
    thread = (await client.threads.create())["thread_id"]
    _, first = await _stream(client, thread, assistant_id, {"question": "Which river flows into the Caspian?"}, None)
    _, second = await _stream(client, thread, assistant_id, {"question": "Who discovered polonium?"}, None)
    for values in (first, second):
        nodes = [record["node"] for record in values["trace"]]
        assert nodes[0] == "understand" and nodes.count("understand") == 1 and nodes.count("answer") == 1, nodes
    assert (await client.threads.get_state(thread))["values"]["trace"] == second["trace"]


def test_a_typo_in_a_context_key_is_refused_naming_the_closest_field(server):
    """Issue 16: the server keeps only the context schema's fields, so `multihopp` ran with the default."""
    asyncio.run(_typo(server))


async def _typo(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    thread = (await client.threads.create())["thread_id"]
    with pytest.raises(httpx.HTTPStatusError) as refused:
        async for _ in client.runs.stream(thread, assistant_id, input={"question": "Which river?"},
                                          context={"multihopp": "always"}):
            pass
    assert refused.value.response.status_code == 422
    assert "unknown Context fields: 'multihopp' (did you mean 'multihop'?)" in refused.value.response.text
    with pytest.raises(httpx.HTTPStatusError, match="did you mean 'multihop'"):
        await client.assistants.create("cragraph", context={"multihopp": "never"})
    with pytest.raises(httpx.HTTPStatusError) as moved:
        async for _ in client.runs.stream(thread, assistant_id, input={"question": "Which river?"},
                                          context={"web_base_url": "http://127.0.0.1:9"}):
            pass
    assert ("web_base_url is an operator setting now: set it in cragraph.toml [web] base_url or "
            "CRAGRAPH_WEB__BASE_URL") in moved.value.response.text
    question = {"question": "Which river?"}
    # what the guide's example sends: a client may turn the web off (never on) on the default server
    done = await client.runs.wait(thread, assistant_id, input=question,
                                  context={"multihop": "never", "web_search": False})
    assert done["trace"][0]["node"] == "understand"


def test_a_bad_index_reaches_the_client_with_its_message_and_no_machine_path(open_server, tmp_path):
    """Issue 16: a BundleError came back as 'An internal error occurred'; the operator's folders stay hidden."""
    asyncio.run(_bad_index(open_server, tmp_path / "nowhere" / "idx"))


async def _bad_index(url: str, missing: Path) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistant_id = (await client.assistants.search(graph_id="cragraph"))[0]["assistant_id"]
    thread = (await client.threads.create())["thread_id"]
    errors = [
        part.data
        async for part in client.runs.stream(thread, assistant_id, input={"question": "Which river?"},
                                             context={"index": str(missing)})
        if part.event == "error"
    ]
    assert errors and errors[0]["error"] == "IndexUnavailable", errors
    assert errors[0]["message"].startswith("no index at .../idx; build one with `cragraph index"), errors
    assert str(missing.parent) not in errors[0]["message"]
