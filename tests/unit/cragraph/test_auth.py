"""cragraph/auth.py: the operator's key table and what a key turns into (identity, "acl:<label>" permissions)."""

from __future__ import annotations

import asyncio
import json

import pytest
from langgraph_sdk import Auth

from cragraph.auth import KEYS_ENV, authenticate, load_keys, user_for

TABLE = {"k-alice": {"identity": "alice", "acl": ["team-a", "hr"]}, "k-bob": {"identity": "bob", "acl": "team-b"}}


def test_keys_inline_or_from_a_file_and_malformed_ones_refused(tmp_path):
    assert load_keys(json.dumps(TABLE)) == TABLE and load_keys("") == {}
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(TABLE), encoding="utf-8")
    assert load_keys(str(path)) == TABLE
    for bad in ('["k"]', '{"k": "alice"}', '{"k": {"acl": ["a"]}}', '{"": {"identity": "x"}}'):
        with pytest.raises(ValueError, match=KEYS_ENV):
            load_keys(bad)


def test_a_key_names_its_user_and_labels():
    assert user_for("k-alice", TABLE) == {"identity": "alice", "permissions": ["acl:hr", "acl:team-a"]}
    assert user_for("k-bob", TABLE) == {"identity": "bob", "permissions": ["acl:team-b"]}
    assert user_for("k-alic", TABLE) is None and user_for("", TABLE) is None


def test_the_handler_takes_the_key_from_either_header_and_refuses_others(monkeypatch):
    monkeypatch.setenv(KEYS_ENV, json.dumps(TABLE))
    assert asyncio.run(authenticate({b"x-api-key": b"k-bob"}))["identity"] == "bob"
    assert asyncio.run(authenticate({b"authorization": b"Bearer k-alice"}))["identity"] == "alice"
    for headers in ({}, {b"x-api-key": b"nope"}, {b"authorization": b"Basic k-alice"}):
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            asyncio.run(authenticate(headers))
        assert refused.value.status_code == 401


def test_without_keys_every_request_is_one_anonymous_caller_without_labels(monkeypatch):
    monkeypatch.delenv(KEYS_ENV, raising=False)
    assert asyncio.run(authenticate({})) == {"identity": "anonymous", "permissions": []}
    assert asyncio.run(authenticate({b"x-api-key": b"anything"}))["permissions"] == []


def test_a_runs_unknown_context_key_is_a_422_naming_the_closest_field(monkeypatch):
    """The server keeps only the context schema's fields, so the auth handler is where a typo can be refused."""
    from cragraph.auth import own_runs, shared_assistants

    monkeypatch.delenv(KEYS_ENV, raising=False)
    user = Auth.types.AuthContext(user=_User("anonymous"), permissions=[], resource="threads", action="create_run")
    sent = {"kwargs": {"context": {"multihopp": "always"}, "config": {"configurable": {"__context_provided__": True}}}}
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        asyncio.run(own_runs(user, sent))
    assert refused.value.status_code == 422 and "did you mean 'multihop'" in refused.value.detail
    fine = {"kwargs": {"context": {"multihop": "always"}, "config": {"configurable": {"__context_provided__": True}}}}
    assert asyncio.run(own_runs(user, fine)) == {"owner": "anonymous"}
    other_keys = {"kwargs": {"context": {"user_id": "u"}, "config": {"configurable": {"user_id": "u"}}}}
    assert asyncio.run(own_runs(user, other_keys)) == {"owner": "anonymous"}  # a configurable may carry any key
    with pytest.raises(Auth.exceptions.HTTPException, match="upperr"):
        asyncio.run(shared_assistants(user, {"context": {"upperr": 0.3}}))


class _User:
    def __init__(self, identity: str):
        self.identity = identity
