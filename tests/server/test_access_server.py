"""Per-document access control through `langgraph dev` with cragraph/auth.py registered: two API keys, the same
question, different documents; no key is a 401; a forged filter, context or configurable does not widen access;
one caller cannot read the other's thread, cron or store items, nor learn the field names of its documents."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from cragraph.cli.agent import server_env
from tests.fixtures.graph import DOCS, build_tiny_index
from tests.fixtures.server import ROOT, langgraph_dev

pytestmark = pytest.mark.server
KEYS = {"key-alice": {"identity": "alice", "acl": ["team-a"]}, "key-bob": {"identity": "bob", "acl": "team-b"}}
SECRETS = [
    {"id": "vault-a", "title": "Vault", "text": "The vault code is 4711.", "metadata": {"acl": ["team-a"]}},
    {"id": "vault-b", "title": "Vault", "text": "The vault code is 9922.",
     "metadata": {"acl": ["team-b"], "b_only_field": "x"}},
]
QUESTION = {"question": "What is the vault code?"}


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_embedder_dir):
    folder = tmp_path_factory.mktemp("access-server")
    index = build_tiny_index(folder, tiny_embedder_dir, [*DOCS, *SECRETS])
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    config["dependencies"] = [str(ROOT)]
    config["graphs"] = {name: {**spec, "path": str(ROOT / spec["path"].removeprefix("./"))}
                        for name, spec in config["graphs"].items()}
    config["auth"]["path"] = str(ROOT / config["auth"]["path"].removeprefix("./"))  # the project's registration
    (folder / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    env = server_env(str(index))
    env.update(
        {
            "CRAGRAPH_EVALUATOR": "cosine",
            "CRAGRAPH_WEB_SEARCH": "false",
            "CRAGRAPH_GRADE__UPPER": "-1.0",
            "CRAGRAPH_GRADE__LOWER": "-1.0",
            "CRAGRAPH_DEBUG": "true",
            "CRAGRAPH_API_KEYS": json.dumps(KEYS),
            "OMP_NUM_THREADS": "1",
        }
    )
    with langgraph_dev(env, folder / "server.log", config=folder / "langgraph.json") as (url, _):
        yield url


def test_two_callers_see_their_own_documents_and_threads(server):
    asyncio.run(_callers(server))


async def _run(client, payload: dict, **kwargs) -> tuple[str, str]:
    thread = await client.threads.create()
    values, errors = None, []
    async for part in client.runs.stream(
        thread["thread_id"], "cragraph", input=payload, stream_mode="values", **kwargs
    ):
        if part.event == "error":
            errors.append(part.data)
        elif part.event == "values":
            values = part.data
    assert not errors and values is not None, errors
    return thread["thread_id"], json.dumps(values)


def shows(dumped: str, secret: str) -> bool:
    """The secret stands in the run's values as itself, not as digits inside a number (a margin)."""
    return re.search(rf"(?<![\w.]){re.escape(secret)}(?!\w)", dumped) is not None


async def _callers(url: str) -> None:
    import httpx
    from langgraph_sdk import get_client

    alice = get_client(url=url, api_key="key-alice")
    bob = get_client(url=url, api_key="key-bob")
    alice_thread, seen_by_alice = await _run(alice, QUESTION)
    _, seen_by_bob = await _run(bob, QUESTION)
    assert shows(seen_by_alice, "4711") and not shows(seen_by_alice, "9922")
    assert shows(seen_by_bob, "9922") and not shows(seen_by_bob, "4711")

    _, forged = await _run(
        alice,
        {**QUESTION, "filters": {"acl": "team-b"}},
        config={"configurable": {"langgraph_auth_user": {"identity": "bob", "permissions": ["acl:team-b"]}}},
    )
    assert not shows(forged, "9922")
    _, forged_filter = await _run(alice, {**QUESTION, "filters": {"doc_id": "vault-b"}})
    assert not shows(forged_filter, "9922")

    async with httpx.AsyncClient() as http:
        assert (await http.post(f"{url}/threads", json={})).status_code in (401, 403)
        wrong = await http.post(f"{url}/threads", json={}, headers={"x-api-key": "key-mallory"})
        assert wrong.status_code in (401, 403)
        studio = await http.post(f"{url}/threads", json={}, headers={"x-auth-scheme": "langsmith"})
        assert studio.status_code in (401, 403)  # the Studio shortcut does not bypass the keys
    with pytest.raises(Exception, match="managed by the operator"):  # a shared assistant: not one caller's
        await alice.assistants.create("cragraph", context={"multihop": "never"})
    with pytest.raises(Exception, match="managed by the operator"):
        shared = (await alice.assistants.search(graph_id="cragraph"))[0]["assistant_id"]  # reading is allowed
        await alice.assistants.update(shared, context={"multihop": "never"})
    with pytest.raises(Exception, match="not found"):  # langgraph-sdk's NotFoundError: the thread is hidden
        await bob.threads.get_state(alice_thread)
    assert "4711" in json.dumps(await alice.threads.get_state(alice_thread))  # its owner still reads it


def test_store_items_crons_and_field_names_stay_with_their_owner(server):
    asyncio.run(_owned(server))


async def _owned(url: str) -> None:
    from langgraph_sdk import get_client

    alice = get_client(url=url, api_key="key-alice")
    bob = get_client(url=url, api_key="key-bob")
    await bob.store.put_item(["bob"], "k", {"secret": "bob-store-9922"})
    assert (await bob.store.get_item(["bob"], "k"))["value"] == {"secret": "bob-store-9922"}
    for read in (lambda: alice.store.get_item(["bob"], "k"), lambda: alice.store.search_items(["bob"]),
                 lambda: alice.store.put_item(["bob"], "k", {"secret": "overwritten"}),
                 lambda: alice.store.delete_item(["bob"], "k")):
        with pytest.raises(Exception, match="store namespaces of this caller start with 'alice'"):
            await read()
    await alice.store.put_item(["alice", "notes"], "k", {"mine": 1})
    everything = json.dumps([await alice.store.search_items([]), await alice.store.list_namespaces()])
    assert "bob-store-9922" not in everything and '"bob"' not in everything and "notes" in everything
    assert (await bob.store.get_item(["bob"], "k"))["value"] == {"secret": "bob-store-9922"}  # untouched

    thread = await bob.threads.create()
    cron = await bob.crons.create_for_thread(thread["thread_id"], "cragraph", schedule="0 0 1 1 *", input=QUESTION)
    assert cron["cron_id"] in json.dumps(await bob.crons.search())
    assert cron["cron_id"] not in json.dumps(await alice.crons.search())

    # A filter on a field only team-b's documents carry: to alice, as unknown as a field no document has.
    refusals = [await _error(alice, {**QUESTION, "filters": {field: "x"}}) for field in ("b_only_field", "nofield")]
    assert all("unknown filter field" in refusal and "b_only_field" not in refusal.split("known fields:")[1]
               for refusal in refusals), refusals


async def _error(client, payload: dict) -> str:
    thread = await client.threads.create()
    errors = [part.data async for part in client.runs.stream(thread["thread_id"], "cragraph", input=payload)
              if part.event == "error"]
    assert errors, payload
    return json.dumps(errors)


def test_without_a_key_only_the_api_description_answers(server):
    """/docs, /openapi.json, /info and /ok answer without a key (LangGraph serves them before authentication):
    they describe the API and the server, never documents, threads, store items or settings (README)."""
    import httpx

    for path in ("/docs", "/openapi.json", "/info", "/ok"):
        reply = httpx.get(f"{server}{path}", timeout=30)
        assert reply.status_code == 200, path
        assert not any(secret in reply.text for secret in ("4711", "9922", "key-alice", "team-a", "b_only_field"))
    for path in ("/threads/search", "/store/items/search", "/runs/crons/search", "/assistants/search"):
        assert httpx.post(f"{server}{path}", json={}, timeout=30).status_code in (401, 403), path


def test_a_malformed_chat_input_is_refused_by_name_over_the_server(server):
    asyncio.run(_malformed(server))


async def _malformed(url: str) -> None:
    from langgraph_sdk import get_client

    alice = get_client(url=url, api_key="key-alice")
    for payload, says in (({"messages": 5}, '\\"messages\\" must be a list of messages'),
                          ({"messages": [{"role": "bogus", "content": "x"}]}, "messages[0]: role 'bogus'"),
                          ({"messages": [{"role": "user", "content": [5, None, "x"]}]}, "content must be text")):
        error = await _error(alice, payload)
        assert says in error, error
