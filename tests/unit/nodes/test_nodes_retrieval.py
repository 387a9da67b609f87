"""retrieve, rerank, grade on a tiny index: passage dicts, filters, stored-vector rerank, verdicts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from langgraph.runtime import Runtime

from nodes._runtime import bundle_of
from nodes.grade import grade
from nodes.rerank import rerank
from nodes.retrieve import retrieve
from rag.knowledge.vectors import chunk_rows, query_vector
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("retrieval-index"), tiny_embedder_dir)


def test_retrieve_returns_json_passages_and_honours_filters(index):
    ctx = context(index, operator={"rerank": {"retrieve_k": 3}, "retrieval": {"mode": "bm25"}})
    update = retrieve({"question": "Which river flows into the Caspian Sea?"}, Runtime(context=ctx))
    assert len(update["hits"]) == 3
    json.dumps(update)
    assert update["hits"][0]["id"].startswith("volga")
    assert {"id", "doc_id", "title", "text", "score", "scores", "source"} <= set(update["hits"][0])
    filtered = retrieve({"question": "flows", "filters": {"doc_id": "thames"}}, Runtime(context=ctx))
    assert [h["doc_id"] for h in filtered["hits"]] == ["thames"]


def test_the_retrieve_node_searches_with_the_operators_retrieval_settings(index):
    question = {"question": "Which river flows into the Caspian Sea?"}
    hybrid = retrieve(question, Runtime(context=context(index)))["hits"]
    bm25 = retrieve(question, Runtime(context=context(index, operator={"retrieval": {"mode": "bm25"}})))["hits"]
    assert "dense" in hybrid[0]["scores"] and all("dense" not in hit["scores"] for hit in bm25)


def test_rerank_orders_by_stored_cosine_and_keeps_rerank_k(index):
    ctx = context(index, operator={"rerank": {"retrieve_k": 4, "k": 2, "fused_weight": 0.0}})
    question = "Which river flows into the Caspian Sea?"
    hits = retrieve({"question": question}, Runtime(context=ctx))["hits"]
    update = rerank({"question": question, "hits": hits}, Runtime(context=ctx))
    kept = update["candidates"]
    assert len(kept) == 2
    bundle = bundle_of(ctx)
    expected = bundle.dense.vectors_for(chunk_rows(bundle, [h["id"] for h in hits])) @ query_vector(
        bundle.embedder, question
    )
    best_two = [hits[i]["id"] for i in np.argsort(-expected)[:2]]
    assert [p["id"] for p in kept] == best_two


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        ("Which river flows into the Caspian Sea?", "correct"),
        ("Which river flows past Kazan bridges in Siberia?", "ambiguous"),
        ("What is the population of Tokyo Japan?", "incorrect"),
    ],
)
def test_grade_takes_each_crag_branch(index, monkeypatch, question, verdict):
    use_keyword_evaluator(monkeypatch)
    ctx = context(index, operator={"rerank": {"retrieve_k": 4, "k": 4}})
    hits = retrieve({"question": question}, Runtime(context=ctx))["hits"]
    candidates = rerank({"question": question, "hits": hits}, Runtime(context=ctx))["candidates"]
    update = grade({"question": question, "candidates": candidates}, Runtime(context=ctx))
    assert update["verdict"] == verdict
    assert len(update["grades"]) == len(candidates) and all(-1 <= g <= 1 for g in update["grades"])
    assert update["trace"][0]["decision"] == verdict


def test_grade_with_no_candidates_is_incorrect(index, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    update = grade({"question": "anything", "candidates": []}, Runtime(context=context(index)))
    assert update["verdict"] == "incorrect"


def test_cosine_grade_from_stored_vectors_equals_the_evaluator(index):
    from evaluators.cosine import CosineEvaluator
    from rag.knowledge.passages import passage_text

    ctx = context(index, evaluator="cosine", operator={"rerank": {"retrieve_k": 3, "k": 3}})
    question = "Which river flows into the Caspian Sea?"
    hits = retrieve({"question": question}, Runtime(context=ctx))["hits"]
    update = grade({"question": question, "candidates": hits}, Runtime(context=ctx))
    evaluator = CosineEvaluator(str(bundle_of(ctx).settings.embedder))
    direct = evaluator.score(question, [passage_text(h) for h in hits])
    assert np.allclose(update["grades"], direct, atol=1e-4)
