"""Per-document access control (issue 14): documents carry `acl` labels, a server caller holds "acl:<label>"
permissions, and every retrieval path (hybrid search, PRF, entity retrieval, multi-query, the multi-hop plan)
sees only the caller's documents; filters and context cannot widen them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np
import pytest

from graph import graph
from rag.policy import client_context
from rag.retrieval.access import caller_labels, labels_of, restrict, visible_rows
from rag.retrieval.metadata import CategoryPredictor
from stores.bundle import load_bundle
from stores.docstore import FilterError
from tests.fixtures.graph import DOCS, build_tiny_index, context, use_keyword_evaluator

QUESTION = "What is the vault code?"
SECRETS = [
    {"id": "vault-a", "title": "Vault", "text": "The vault code is 4711.", "metadata": {"acl": ["team-a"]}},
    {"id": "vault-b", "title": "Vault", "text": "The vault code is 9922.",
     "metadata": {"acl": "team-b", "b_only_field": "x"}},
    {
        "id": "vault-ab",
        "title": "Vault",
        "text": "The vault code list is kept by both teams.",
        "metadata": {"acl": ["team-a", "team-b"]},
    },
]


@dataclass
class User:
    """What a LangGraph server puts in config["configurable"]["langgraph_auth_user"] after authentication."""

    identity: str
    permissions: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("acl-index"), tiny_embedder_dir, [*DOCS, *SECRETS])


@pytest.fixture(autouse=True)
def _keyword_evaluator(monkeypatch):
    use_keyword_evaluator(monkeypatch)


def ask(index, user: User | None, filters=None, operator=None, **settings):
    config = {"configurable": {"graph_id": "cragraph", "langgraph_auth_user": user}} if user else {}
    request = {"question": QUESTION, **({"filters": filters} if filters else {})}
    sections = {"grade": {"upper": -1.0, "lower": -1.0}, **(operator or {})}
    return graph.invoke(request, config, context=context(index, debug=True, operator=sections, **settings))


def seen(result) -> str:
    return json.dumps(result, ensure_ascii=False)  # answer, citations, evidence, trace and debug passages


def shows(result, secret: str) -> bool:
    """The secret stands in the result as itself, not as digits inside a number (a margin such as
    -14.341838836669922 holds "9922" on some CPUs' kernels)."""
    return re.search(rf"(?<![\w.]){re.escape(secret)}(?!\w)", seen(result)) is not None


ALL_PATHS = {"operator": {"techniques": {"prf": True, "entity_retrieval": True, "multi_query": True,
                                         "query_class_alpha": True}}}


@pytest.mark.parametrize("paths", [{}, ALL_PATHS, {"multihop": "always"},
                                   {"operator": {"retrieval": {"mode": "dense"}}}])
def test_two_callers_asking_the_same_question_see_different_documents(index, paths):
    alice = ask(index, User("alice", ["acl:team-a"]), **paths)
    bob = ask(index, User("bob", ["acl:team-b", "threads:read"]), **paths)
    assert shows(alice, "4711") and not shows(alice, "9922") and "vault-b" not in seen(alice)
    assert shows(bob, "9922") and not shows(bob, "4711") and "vault-a#" not in seen(bob)
    assert "kept by both teams" in seen(alice) + seen(bob)


def test_an_anonymous_server_caller_sees_public_documents_and_the_operator_everything(index):
    anonymous = ask(index, User("anonymous"))
    assert not any(shows(anonymous, code) for code in ("4711", "9922", "both teams"))
    operator = ask(index, None)  # the operator's own process: no server, no restriction
    assert shows(operator, "4711") or shows(operator, "9922")

    def chunks(result):
        return next(e for e in result["trace"] if e["node"] == "retrieve")["counts"]["index_chunks"]

    assert chunks(anonymous) == chunks(operator) - len(SECRETS)  # hidden documents are not even counted


@pytest.mark.parametrize(
    "filters",
    [
        {"acl": "team-b"},
        {"acl": ["team-b"]},
        {"doc_id": "vault-b"},
        {"doc_id": ["vault-a", "vault-b"]},
        {"id": {"prefix": "vault-b"}},
    ],
)
def test_a_forged_filter_only_narrows(index, filters):
    alice = ask(index, User("alice", ["acl:team-a"]), filters=filters, **ALL_PATHS)
    assert not shows(alice, "9922")


def test_access_cannot_come_from_the_context_or_the_input(index):
    with pytest.raises(ValueError, match="unknown Context fields: 'acl'"):
        client_context({"acl": ["team-b"]})
    alice = graph.invoke(
        {"question": QUESTION, "acl": ["team-b"], "permissions": ["acl:team-b"]},  # not input fields: ignored
        {
            "configurable": {
                "graph_id": "cragraph",
                "langgraph_auth_user": User("alice", ["acl:team-a"]),
                "acl": ["team-b"],
            }
        },
        context=context(index, debug=True, operator={"grade": {"upper": -1.0, "lower": -1.0}}),
    )
    assert not shows(alice, "9922")


def test_labels_and_row_sets(index):
    assert labels_of(["a", " b ", "", 3]) == {"a", "b"} and labels_of("x") == {"x"} and labels_of(None) == set()
    assert caller_labels(["acl:a", "acl:", "threads:read", 7, "acl: b"]) == {"a", "b"}
    bundle = load_bundle(str(index))
    public = visible_rows(bundle, frozenset())
    assert visible_rows(bundle, None) is None and len(bundle.docstore) == len(public) + 3
    assert visible_rows(bundle, frozenset({"team-a", "team-b"})) is None  # every row: the unfiltered fast path
    assert len(visible_rows(bundle, frozenset({"team-a"}))) == len(public) + 2
    assert restrict(None, public) is public and restrict(np.array([0, 999]), None).tolist() == [0, 999]
    assert restrict(np.array([999]), public).tolist() == []


@pytest.mark.parametrize("field", ["nonexistent_field", "b_only_field"])
def test_a_filter_error_names_only_the_fields_of_documents_the_caller_sees(index, field):
    with pytest.raises(FilterError) as refused:
        ask(index, User("alice", ["acl:team-a"]), filters={field: "x"})
    message = str(refused.value)
    assert f"unknown filter field {field!r}" in message and "known fields:" in message and "acl" in message
    assert "b_only_field" not in message.split("known fields:")[1]  # a field only team-b's documents carry
    with pytest.raises(FilterError, match="b_only_field"):  # the operator sees every document's fields
        ask(index, None, filters={"nonexistent_field": "x"})
    assert shows(ask(index, User("bob", ["acl:team-b"]), filters={"b_only_field": "x"}), "9922")


def test_category_predictions_come_from_the_callers_documents_only(tmp_path, tiny_embedder_dir, monkeypatch):
    """Issue 45 ("any count, facet or error"): the category predictor's labels and centroids are the caller's;
    a category only hidden documents carry is never predicted, nor named as the best guess."""
    use_keyword_evaluator(monkeypatch)
    docs = [{"id": f"{category}-{i}", "title": f"Note {i}", "text": f"The vault note {i} of {category}.",
             "metadata": {"category": category, **({"acl": "team-b"} if category == "zeta" else {})}}
            for category in ("rivers", "science", "zeta") for i in range(3)]
    index = build_tiny_index(tmp_path, tiny_embedder_dir, docs)
    bundle = load_bundle(str(index))
    alice_rows = visible_rows(bundle, frozenset({"team-a"}))
    assert CategoryPredictor.from_bundle(bundle).labels == ["rivers", "science", "zeta"]
    assert CategoryPredictor.from_bundle(bundle, visible=alice_rows).labels == ["rivers", "science"]
    for confidence in (0.0, 1.01):  # always predicted; never (the note names the best guess)
        alice = ask(index, User("alice", ["acl:team-a"]),
                    operator={"techniques": {"category_boost": True, "category_min_confidence": confidence}})
        assert "zeta" not in seen(alice) and "category" in seen(alice["trace"])


def test_the_cross_lingual_route_knows_only_the_languages_of_the_callers_documents(tmp_path, tiny_embedder_dir,
                                                                                    monkeypatch):
    """A Chinese document only team-b sees: to alice the index is in English and Russian, so her Chinese question
    crosses languages and the note names no "zh"; to bob it does not cross at all."""
    use_keyword_evaluator(monkeypatch)
    hidden = {"id": "zh-b", "title": "伏尔加河", "text": "伏尔加河是欧洲最长的河流，流入里海。",
              "metadata": {"acl": "team-b"}}
    index = build_tiny_index(tmp_path, tiny_embedder_dir, [*DOCS, hidden])
    question = {"question": "伏尔加河流入哪里？"}

    def crossing(user):
        result = graph.invoke(question, {"configurable": {"langgraph_auth_user": user}},
                              context=context(index, operator={"grade": {"upper": -1.0, "lower": -1.0}}))
        return [r["note"] for r in result["trace"] if "cross-lingual" in (r.get("note") or "")]

    alice = crossing(User("alice", ["acl:team-a"]))
    assert alice and all("index in en, ru:" in note for note in alice), alice
    assert crossing(User("bob", ["acl:team-b"])) == []
