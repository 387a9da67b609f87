"""Agents call the graph as a tool over MCP: the `langgraph dev` server's own /mcp endpoint (langgraph-api,
Streamable HTTP, one tool per assistant), driven by the `mcp` package's real client.

An MCP tool call carries the graph's input as its arguments and no run context, so the tool runs with the
server's settings. Here they come from the environment: on the tiny-embedder index every grade passes and the
reader always answers (random cosines decide nothing; the plumbing is under test). The server has an API key
(cragraph/auth.py), which the endpoint passes on, so the keyed caller's answer cites its labelled document.
No assistant is created: `langgraph dev` keeps assistants in the checkout's .langgraph_api/, where an extra one
would become a tool of every later server.
"""

from __future__ import annotations

import ast
import asyncio
import json
from typing import Any

import httpx
import httpx2  # the mcp client's HTTP library: a client with headers is how it sends a key
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from tests.fixtures.graph import DOCS, build_tiny_index
from tests.fixtures.server import tiny_dev_server

pytestmark = pytest.mark.server

KEY = "key-agent"
VAULT: dict[str, Any] = {"id": "vault-a", "title": "Vault", "text": "The vault code is 4711.",
                         "metadata": {"acl": ["team-a"]}}
SERVER_ENV = {"CRAGRAPH_GRADE__UPPER": "-1.0", "CRAGRAPH_GRADE__LOWER": "-1.0", "CRAGRAPH_ANSWER_THRESHOLD": "0",
              "CRAGRAPH_MULTIHOP": "never",
              "CRAGRAPH_API_KEYS": json.dumps({KEY: {"identity": "agent", "acl": ["team-a"]}})}


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_embedder_dir):
    folder = tmp_path_factory.mktemp("mcp-server")
    index = build_tiny_index(folder, tiny_embedder_dir, [*DOCS, VAULT])
    with tiny_dev_server(folder, index, tiny_embedder_dir, **SERVER_ENV) as url:
        yield url


def test_an_mcp_client_lists_the_graph_tool_and_gets_a_cited_answer(server):
    asyncio.run(_ask(server))


async def _ask(url: str) -> None:
    async with httpx2.AsyncClient(headers={"x-api-key": KEY}, timeout=60) as http, \
            Client(streamable_http_client(f"{url}/mcp", http_client=http), read_timeout_seconds=60) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "cragraph" in tools, sorted(tools)
        assert "citations" in (tools["cragraph"].description or ""), tools["cragraph"].description  # langgraph.json's
        assert "question" in tools["cragraph"].input_schema["properties"], tools["cragraph"].input_schema

        answered = _reply(await client.call_tool("cragraph", {"question": "What is the vault code?"}))
        assert not answered["abstained"] and "4711" in answered["answer"], answered
        cited = [citation["doc_id"] for citation in answered["citations"]]
        assert "vault-a" in cited and set(cited) <= {doc["id"] for doc in [*DOCS, VAULT]}, answered["citations"]
        assert answered["evidence"]

        # A refused input is an error result; langgraph-api 0.16 sends only the exception's class name, not its
        # message (the run's `__error__.error`).
        refused = await client.call_tool("cragraph", {"question": 42})
        assert refused.is_error and _text(refused) == "ValueError", refused.content


def test_a_client_without_the_key_is_refused(server):
    asyncio.run(_without_key(server))


async def _without_key(url: str) -> None:
    with pytest.raises(BaseException) as refused:  # an ExceptionGroup from the client's task group
        async with Client(f"{url}/mcp", read_timeout_seconds=60) as client:
            await client.list_tools()
    assert "Server returned an error response" in repr(refused.value), repr(refused.value)
    # the client does not say why; the HTTP status does
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient() as http:
        assert (await http.post(f"{url}/mcp", json=ping, headers=headers)).status_code == 401
        assert (await http.post(f"{url}/mcp", json=ping, headers={**headers, "x-api-key": KEY})).json()["result"] == {}


def _reply(result: CallToolResult) -> dict[str, Any]:
    """The tool's reply: one text block holding the run's output state as a Python literal (the endpoint sends
    the repr of the JSON values)."""
    assert not result.is_error, result.content
    values = ast.literal_eval(_text(result))
    assert isinstance(values, dict), values
    return values


def _text(result: CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent), content
    return content.text
