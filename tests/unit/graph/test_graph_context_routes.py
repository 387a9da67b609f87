"""Context (descriptions, env overrides), routes (CRAG branches, budgets) and the compiled graph's shape."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from graph.routes import route_after_grade, route_after_web, route_question
from rag.context import Context

ROOT = Path(__file__).resolve().parents[3]
NODES = ["understand", "route", "multihop", "retrieve", "rerank", "grade", "refine", "web_search", "rewrite", "select",
         "answer"]


def test_every_context_field_has_a_description():
    for item in fields(Context):
        assert len(item.metadata.get("description", "")) > 10, item.name


def test_environment_overrides_defaults_but_not_explicit_values(monkeypatch):
    monkeypatch.setenv("CRAGRAPH_INDEX", "/data/idx")
    monkeypatch.setenv("CRAGRAPH_CHAT_MODEL", "ollama:qwen2.5:7b")
    monkeypatch.setenv("CRAGRAPH_WEB_SEARCH", "false")
    monkeypatch.setenv("CRAGRAPH_MAX_RETRIEVAL_ROUNDS", "3")
    monkeypatch.setenv("CRAGRAPH_ANSWER_THRESHOLD", "0.4")
    ctx = Context()
    assert (ctx.index, ctx.chat_model, ctx.web_search, ctx.max_retrieval_rounds, ctx.answer_threshold) == (
        "/data/idx",
        "ollama:qwen2.5:7b",
        False,
        3,
        0.4,
    )
    assert Context(index="/mine").index == "/mine"
    assert (
        ctx.model_for("") == "ollama:qwen2.5:7b"
        and ctx.model_for("openai:gpt-4o-mini") == "openai:gpt-4o-mini"
    )
    monkeypatch.setenv("CRAGRAPH_DEBUG", "maybe")
    with pytest.raises(ValueError, match="CRAGRAPH_DEBUG"):
        Context()


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"verdict": "correct"}, ["refine"]),
        ({"verdict": "ambiguous", "web_status": "not run"}, ["refine", "web_search"]),
        ({"verdict": "ambiguous", "web_status": "failed:timeout"}, ["refine"]),
        ({"verdict": "incorrect", "web_status": "not run"}, ["web_search"]),
        (
            {
                "verdict": "incorrect",
                "web_status": "failed:rate_limit",
                "retrieval_round": 0,
                "max_retrieval_rounds": 1,
            },
            ["rewrite"],
        ),
        (
            {"verdict": "incorrect", "web_status": "off", "retrieval_round": 1, "max_retrieval_rounds": 1},
            ["refine"],
        ),
    ],
)
def test_route_after_grade(state, expected):
    assert route_after_grade(state) == expected


def test_route_after_web_and_question_route():
    assert (
        route_after_web(
            {"verdict": "incorrect", "web_knowledge": [], "retrieval_round": 0, "max_retrieval_rounds": 2}
        )
        == "rewrite"
    )
    assert (
        route_after_web(
            {"verdict": "incorrect", "web_knowledge": [], "retrieval_round": 2, "max_retrieval_rounds": 2}
        )
        == "refine"
    )
    assert (
        route_after_web(
            {
                "verdict": "incorrect",
                "web_knowledge": [{"id": "u"}],
                "retrieval_round": 0,
                "max_retrieval_rounds": 2,
            }
        )
        == "select"
    )
    assert route_after_web({"verdict": "ambiguous", "web_knowledge": []}) == "select"
    assert route_question({"route": "single"}) == "retrieve"


def test_graph_imports_fast_without_models_and_draws_every_node():
    code = (
        "import sys, time; t = time.perf_counter(); from graph import graph; "
        "print(round(time.perf_counter() - t, 2)); "
        "print(any(m.startswith(('sentence_transformers', 'transformers', 'torch')) for m in sys.modules)); "
        "print(graph.get_graph().draw_mermaid())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    seconds, heavy, mermaid = out.split("\n", 2)
    assert heavy == "False"
    assert float(seconds) < 10
    for node in NODES:
        assert node in mermaid
    assert "grade -.-> web_search" in mermaid and "rewrite --> route" in mermaid
