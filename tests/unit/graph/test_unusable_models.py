"""A chat model that cannot be used is said once on stderr with the fix, and an LLM grader whose replies cannot
be read is counted in the grade record and replaced by the embedded evaluator above a share (issue 16)."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from evaluators import registry
from evaluators.llm_grader import LLMGraderEvaluator
from graph import graph
from models import structured
from models.scripted import ScriptedChatModel
from nodes import grade as grade_node
from tests.fixtures.graph import build_tiny_index, context, use_keyword_evaluator


class Reply(BaseModel):
    answer: str


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("unusable-index"), tiny_embedder_dir)


def test_a_missing_provider_package_is_said_once_with_the_fix(monkeypatch, caplog):
    monkeypatch.setattr(structured, "_WARNED", set())
    with caplog.at_level(logging.WARNING, logger="cragraph.models"):
        for _ in range(3):
            value, error = structured.ask_structured("nosuchprovider:some-model", [HumanMessage("hi")], Reply)
            assert value is None and "nosuchprovider" in error
    said = [r.getMessage() for r in caplog.records if r.name == "cragraph.models"]
    assert len(said) == 1, said
    assert "cannot be used" in said[0] and "Fix:" in said[0] and "--chat-model embedded" in said[0]


def test_an_llm_answer_model_that_cannot_load_warns_once_over_two_runs(index, monkeypatch, caplog):
    use_keyword_evaluator(monkeypatch)
    monkeypatch.setattr(structured, "_WARNED", set())
    settings = context(index, chat_model="nosuchprovider:m", llm_answer=True)
    with caplog.at_level(logging.WARNING, logger="cragraph.models"):
        for question in ("Which river flows into the Caspian Sea?", "Who discovered polonium?"):
            assert graph.invoke({"question": question}, context=settings)["answer"]
    assert len([r for r in caplog.records if r.name == "cragraph.models"]) == 1


def test_an_unreadable_llm_grader_is_counted_and_replaced(index, monkeypatch, caplog):
    keyword = use_keyword_evaluator(monkeypatch)  # what "cosine" builds: the fallback here
    monkeypatch.setattr(grade_node, "FALLBACK_EVALUATOR", "cosine")
    grader = LLMGraderEvaluator(ScriptedChatModel(responses=["garbage", "no idea", '{"relevance": 2}'], cycle=True),
                                name="llm:scripted")
    monkeypatch.setitem(registry.EVALUATOR_FACTORIES, "scripted", lambda target: grader)
    with caplog.at_level(logging.WARNING):
        result = graph.invoke({"question": "Which river flows into the Caspian Sea?"},
                              context=context(index, evaluator="scripted"))
    record = next(r for r in result["trace"] if r["node"] == "grade")
    graded = record["counts"]["passages"]
    assert graded and record["counts"]["unparsed"] >= graded // 2, record
    assert f"graded with {keyword.name} instead" in record["note"] and "unparsed" in record["note"]
    assert result["verdict"] == "correct"  # the keyword evaluator finds the Volga passage
    assert any("graded with" in r.getMessage() for r in caplog.records)


def test_an_unusable_query2doc_model_is_said_once_too(monkeypatch, caplog):
    from nodes.retrieve import pseudo_doc_writer
    from rag.context import Context

    monkeypatch.setattr(structured, "_WARNED", set())
    write = pseudo_doc_writer(Context(chat_model="nosuchprovider:writer"))
    with caplog.at_level(logging.WARNING, logger="cragraph.models"):
        for _ in range(2):
            with pytest.raises(Exception, match="nosuchprovider"):
                write("query2doc", "Who founded the Radium Institute?", "en")
    said = [r.getMessage() for r in caplog.records if r.name == "cragraph.models"]
    assert len(said) == 1 and "nosuchprovider:writer" in said[0], said
