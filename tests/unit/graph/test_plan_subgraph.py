"""The multi-hop subgraph end to end on a tiny index with a scripted LLM: the fallback chain (LLM -> retry
with the errors -> rules -> single-hop), each outcome in the trace, the DSL in the output, evidence and
facets.

Retrieval runs in BM25 mode (the tiny test embedder's vectors carry no meaning) and entity candidates use the
rule extractor (spaCy is switched off for speed), so no real model loads."""

from __future__ import annotations

import json

import pytest

import models.structured
import stores.ner
from graph.multihop import multihop_graph
from models.scripted import ScriptedChatModel
from rag.config import operator_config
from rag.context import Context
from rag.planning.dsl import parse_dsl
from tests.fixtures.graph import DOCS, build_tiny_index

EXTRA_DOCS = [
    {
        "id": "paris",
        "title": "Paris",
        "text": "Paris is the capital of France. The Seine river flows through Paris.",
    },
    {"id": "seine", "title": "Seine", "text": "The Seine is a river of northern France about 777 km long."},
]
VALID = json.dumps(
    {
        "sub_questions": [
            {
                "id": "q1",
                "text": "In which city did Marie Curie found her institute?",
                "deps": [],
                "slot": "city",
            },
            {"id": "q2", "text": "Which river flows through {city}?", "deps": ["q1"]},
        ]
    }
)
UNUSED_SLOT = json.dumps(
    {
        "sub_questions": [
            {"id": "q1", "text": "In which city did Marie Curie found her institute?", "slot": "city"},
            {"id": "q2", "text": "Which river flows through Paris?"},
        ]
    }
)
QUESTION = "Which river flows through the city where Marie Curie founded her institute?"


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(
        tmp_path_factory.mktemp("multihop-index"), tiny_embedder_dir, [*DOCS, *EXTRA_DOCS]
    )


@pytest.fixture(autouse=True)
def rule_entities(monkeypatch):
    monkeypatch.setattr(stores.ner, "_nlp_failed", True)
    monkeypatch.setattr(stores.ner, "_nlp", None)


def scripted(monkeypatch, *responses):
    model = ScriptedChatModel(responses=list(responses))
    monkeypatch.setattr(models.structured, "load_chat_model", lambda spec: model)
    return model


def run(index, question=QUESTION, llm_decompose=True, max_sub_questions=5, **settings):
    """The planning subgraph over BM25 (operator settings for the run: retrieval mode, the planner's)."""
    with operator_config(retrieval={"mode": "bm25"},
                         multihop={"llm_decompose": llm_decompose, "max_sub_questions": max_sub_questions}):
        return multihop_graph.invoke({"question": question}, context=Context(index=str(index), **settings))


def decisions(output, node):
    return [r["decision"] for r in output["trace"] if r["node"] == node]


def test_valid_llm_plan_runs_end_to_end_and_the_second_hop_uses_the_extracted_city(index, monkeypatch):
    scripted(monkeypatch, VALID)
    output = run(index)
    assert output["decomposition_source"] == "llm"
    # the slotted sub-question comes back filled with each extracted value, the reader's best (the city) first
    assert output["facets"][:2] == ["In which city did Marie Curie found her institute?",
                                    "Which river flows through Paris?"]
    assert len(output["facets"]) == 3
    assert [r["node"] for r in output["trace"]] == [
        "decompose",
        "validate",
        "compile",
        "translate",
        "execute",
    ]
    steps = {r["step"]: r for r in output["trace"][-1]["steps"]}
    assert steps["q1_ans"]["values"][0] == "Paris" and steps["q1_ans"]["note"] == "read by the span reader"
    assert "Which river flows through Paris?" in steps["q2_query"]["values"]
    assert "paris#0" in steps["q2"]["hits"][:2]
    ids = [p["doc_id"] for p in output["knowledge"]]
    assert "curie" in ids and "paris" in ids
    paris = output["knowledge"][ids.index("paris")]
    assert paris["source"] == "index" and "q2" in paris["plan_steps"]
    assert [h["chunk"]["id"] for h in output["evidence_hits"]] == [p["id"] for p in output["knowledge"]]
    assert parse_dsl(output["plan_dsl"]).output == "answer"
    assert output["multihop_answer"]


def test_invalid_plan_is_retried_with_its_errors(index, monkeypatch):
    model = scripted(monkeypatch, UNUSED_SLOT, VALID)
    output = run(index)
    assert output["decomposition_source"] == "llm_retry"
    assert "slot {city} (from q1) is never used" in model.prompts[1]
    assert decisions(output, "validate") == ["llm plan rejected: 1 errors", "llm_retry plan valid"]


def test_two_failures_fall_back_to_the_rule_decomposition(index, monkeypatch):
    scripted(monkeypatch, "not json at all", UNUSED_SLOT)
    output = run(index)
    assert output["decomposition_source"] == "rules"
    assert decisions(output, "decompose") == [
        "llm: failed",
        "llm_retry: 2 sub-questions",
        "rules: 2 sub-questions",
    ]
    assert decisions(output, "validate")[1] == "llm_retry plan rejected: 1 errors"
    assert output["facets"][0] == "the city where Marie Curie founded her institute"
    assert output["knowledge"]


def test_without_a_rule_pattern_the_chain_ends_in_single_hop_with_bridging(index, monkeypatch):
    scripted(monkeypatch, "[]", "{}")
    output = run(index, question="Which river flows past Kazan?")
    assert output["decomposition_source"] == "single"
    assert decisions(output, "decompose") == [
        "llm: failed",
        "llm_retry: failed",
        "rules: failed",
        "single: 1 sub-questions",
    ]
    assert "bridge = MAP_RETRIEVE(@bridge_entities" in output["plan_dsl"]
    assert output["knowledge"][0]["doc_id"] in {"kazan", "volga"}


def test_llm_off_uses_rules_without_calling_a_model(index, monkeypatch):
    model = scripted(monkeypatch)
    output = run(index, llm_decompose=False)
    assert model.calls == [] and output["decomposition_source"] == "rules"


def test_a_limit_of_zero_sub_questions_ends_the_planning_without_a_plan(index, monkeypatch):
    """Issue 45: even the single-hop plan is refused then, and decompose was asked again until the recursion
    limit; the chain now ends there, with no evidence."""
    model = scripted(monkeypatch)
    output = run(index, llm_decompose=False, max_sub_questions=0)
    assert model.calls == [] and not output.get("knowledge") and not output.get("plan_dsl")
    assert decisions(output, "validate") == ["rules plan rejected: 1 errors", "single plan rejected: 1 errors"]
