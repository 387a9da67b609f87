"""Server authentication (LangGraph custom auth): an API key names the caller and the document labels it may see.

Registered in langgraph.json ("auth": {"path": "./cragraph/auth.py:auth", "disable_studio_auth": true}). The
operator lists the keys in CRAGRAPH_API_KEYS: a JSON object, inline or in a file the variable names,
    {"<key>": {"identity": "alice", "acl": ["team-a"]}, "<other key>": {"identity": "bob", "acl": ["team-b"]}}
A request carries its key as `x-api-key: <key>` (langgraph-sdk's `get_client(api_key=...)`) or `Authorization:
Bearer <key>`; once any key is configured, a missing or unknown key is a 401. With no keys configured every
request is one anonymous caller without labels, who sees only the public (unlabelled) documents.
A caller's labels become its permissions "acl:<label>", which the graph reads from the server (never from a
run's context, input or filters) to search only the public documents and those sharing a label
(rag/retrieval/access.py). Threads and crons are private to the caller who made them, so one caller cannot
read another's answers; with keys, store items live under their owner's identity and only the operator changes
assistants (which every caller shares).
`disable_studio_auth` keeps `langgraph dev`'s Studio shortcut (a header that skips this handler) from
bypassing it.
"""

from __future__ import annotations

import hmac
import json
import os
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth

from rag.policy import unknown_fields
from rag.retrieval.access import PERMISSION_PREFIX, labels_of

KEYS_ENV = "CRAGRAPH_API_KEYS"
ANONYMOUS = "anonymous"

auth = Auth()


def load_keys(raw: str | None = None) -> dict[str, dict[str, Any]]:
    """The operator's key table from CRAGRAPH_API_KEYS (inline JSON or a file path); refused when malformed."""
    raw = os.environ.get(KEYS_ENV, "") if raw is None else raw
    text = raw.strip()
    if text and text[0] not in "{[":  # otherwise a path to the JSON file
        text = Path(text).read_text(encoding="utf-8")
    table = json.loads(text) if text else {}
    if not isinstance(table, dict) or not all(
        isinstance(key, str) and key and isinstance(entry, dict) and isinstance(entry.get("identity"), str)
        for key, entry in table.items()
    ):
        raise ValueError(f'{KEYS_ENV} must be a JSON object {{"<key>": {{"identity": "...", "acl": [...]}}}}')
    return table


def user_for(key: str, table: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The user a key names (every key compared in constant time), or None."""
    found = None
    for known, entry in table.items():
        if hmac.compare_digest(known.encode("utf-8"), key.encode("utf-8")):
            found = entry
    if found is None:
        return None
    labels = sorted(labels_of(found.get("acl")))
    return {"identity": found["identity"], "permissions": [PERMISSION_PREFIX + label for label in labels]}


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> dict[str, Any]:
    """The caller named by the request's API key; a 401 without a known one."""
    key = (headers.get(b"x-api-key") or b"").decode("utf-8", "replace").strip()
    if not key:
        bearer = (headers.get(b"authorization") or b"").decode("utf-8", "replace").strip()
        key = bearer[7:].strip() if bearer.lower().startswith("bearer ") else ""
    table = load_keys()
    if not table:  # no keys configured: one anonymous caller, who sees the public documents only
        return {"identity": ANONYMOUS, "permissions": []}
    user = user_for(key, table) if key else None
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="a known API key is required (x-api-key)")
    return user


async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """A caller reads, runs and lists only the threads (and crons) it created, marked with its identity."""
    return mark_owner(ctx, value)


def mark_owner(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """The filter that keeps a caller to its own threads and crons; one it creates gets its identity as owner."""
    owner = {"owner": ctx.user.identity}
    if isinstance(value, dict):
        metadata = value.setdefault("metadata", {})
        if isinstance(metadata, dict):
            metadata.update(owner)
    return owner


def refuse_unknown_context(context: Any) -> None:
    """A 422 naming each context key that is not a Context field, with the closest one. The server keeps only
    the context schema's fields and drops the rest silently, so a typo ("multihopp") would run the default."""
    if isinstance(context, dict):
        problem = unknown_fields(context)
        if problem:
            raise Auth.exceptions.HTTPException(status_code=422, detail=problem)


@auth.on.threads.create_run
async def own_runs(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """A run's context is checked for unknown fields (when the caller sent `context`; a `configurable` may carry
    other keys), then the run is the thread owner's like any thread action (`own_threads`)."""
    kwargs = value.get("kwargs") or {}
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    if configurable.get("__context_provided__"):
        refuse_unknown_context(kwargs.get("context"))
    return mark_owner(ctx, value)


async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every caller reads the shared assistants (registered so that no path is left without a handler)."""


async def shared_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """With API keys, assistants are the operator's: an assistant is shared by every caller, so one caller
    changing its settings would change the others' runs. Without keys (one anonymous caller) Studio may, with
    context fields that exist."""
    if isinstance(value, dict):
        refuse_unknown_context(value.get("context"))
    if load_keys():
        raise Auth.exceptions.HTTPException(status_code=403, detail="assistants are managed by the operator")


@auth.on.store()
async def own_store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """With API keys, a caller's store items live under its identity: a namespace must start with it (a 403
    otherwise), and a search or listing without a prefix is narrowed to it, so one caller never reads, lists or
    overwrites another's items. Without keys there is one caller, and the store is its own."""
    if not load_keys():
        return
    namespace = tuple(value.get("namespace") or ())
    if not namespace:
        value["namespace"] = (ctx.user.identity,)
    elif namespace[0] != ctx.user.identity:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"store namespaces of this caller start with {ctx.user.identity!r}")


# one handler per action (stacked decorators lose the handler's type): threads and crons are their owner's,
# assistants are read by every caller and changed by the operator only
for register_owned in (auth.on.threads, auth.on.crons):
    register_owned(own_threads)
for register_read in (auth.on.assistants.read, auth.on.assistants.search):
    register_read(read_assistants)
for register in (auth.on.assistants.create, auth.on.assistants.update, auth.on.assistants.delete):
    register(shared_assistants)
