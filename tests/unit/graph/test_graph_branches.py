"""The whole graph on a tiny index: each CRAG branch for a constructed case, web failures, loop budgets."""

from __future__ import annotations

import json

import pytest

from graph import graph
from tests.fixtures.graph import (
    IN_CORPUS,
    OFF_CORPUS,
    WEB_RESULT,
    build_tiny_index,
    cites_the_volga,
    context,
    names_the_volga,
    use_keyword_evaluator,
)
from tests.fixtures.tavily_stub import TavilyStub

PARTLY = "Which river flows past Kazan bridges in Siberia?"


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("graph-index"), tiny_embedder_dir)


@pytest.fixture(autouse=True)
def _keyword_evaluator(monkeypatch):
    use_keyword_evaluator(monkeypatch)
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)


def nodes_run(result):
    return [entry["node"] for entry in result["trace"]]


def test_correct_branch_refines_and_cites_the_index_chunk(index):
    result = graph.invoke({"question": IN_CORPUS}, context=context(index))
    assert result["verdict"] == "correct"
    assert nodes_run(result) == [
        "understand", "route", "retrieve", "rerank", "grade", "refine", "select", "highlight", "answer"
    ]
    assert not result["abstained"]
    assert names_the_volga(result["answer"]), result["answer"]
    assert result["citations"][0]["source"] == "index" and cites_the_volga(result["citations"]), result
    assert "Volga" in result["evidence"][0]["sentence"] and result["evidence"][0]["n"] == 1
    assert any("Caspian" in e["sentence"] for e in result["evidence"])
    json.dumps(result)  # the output (and so the state it came from) is JSON-serializable
    assert set(result) >= {"answer", "citations", "evidence", "verdict", "trace", "abstained", "language"}
    assert "hits" not in result  # internal state stays out of the output schema


def test_ambiguous_branch_runs_refine_and_web_in_the_same_step(index, monkeypatch):
    with TavilyStub([WEB_RESULT]) as stub:
        monkeypatch.setenv("TAVILY_API_KEY", "test-key")
        result = graph.invoke(
            {"question": PARTLY}, context=context(index, web_search=True, operator={"web": {"base_url": stub.url}})
        )
    assert result["verdict"] == "ambiguous"
    ran = nodes_run(result)
    assert {"refine", "web_search"} <= set(ran)
    assert ran.index("select") > max(ran.index("refine"), ran.index("web_search"))
    assert ran.count("select") == 1
    assert stub.requests and stub.requests[0]["authorization"] == "Bearer test-key"


def test_incorrect_branch_answers_from_the_web_with_its_url(index, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")
    with TavilyStub([WEB_RESULT]) as stub:
        result = graph.invoke(
            {"question": OFF_CORPUS}, context=context(index, web_search=True, operator={"web": {"base_url": stub.url}})
        )
    assert result["verdict"] == "incorrect"
    assert "refine" not in nodes_run(result)
    assert result["citations"] and all(c["source"] == "web" for c in result["citations"])
    assert result["citations"][0]["url"] == WEB_RESULT["url"]
    assert "14 million" in result["answer"]
    assert stub.requests[0]["json"]["query"] == "population Tokyo Japan"


@pytest.mark.parametrize("mode", ["429", "401", "500", "garbage"])
def test_failing_web_re_retrieves_within_budget_then_abstains(index, monkeypatch, mode):
    """The last round's passages, graded incorrect, are read, and the decision (at the default threshold) gives
    nothing they say about another subject."""
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")
    with TavilyStub([WEB_RESULT], mode=mode) as stub:
        ctx = context(index, web_search=True, max_retrieval_rounds=2, answer_threshold=0.5,
                      operator={"web": {"base_url": stub.url}})
        result = graph.invoke({"question": OFF_CORPUS}, context=ctx)
    assert result["abstained"] and result["citations"] == []
    assert result["answer"].startswith("I do not have enough information")
    ran = nodes_run(result)
    assert ran.count("retrieve") == 3 and ran.count("rewrite") == 2
    assert ran.count("web_search") == 1  # a failed web search is not repeated in later rounds
    web = next(e for e in result["trace"] if e["node"] == "web_search")
    assert web["decision"].startswith("failed:")
    assert "web: failed" in result["trace"][-1]["note"]


def test_web_off_or_without_key_says_why_and_zero_budget_abstains_at_once(index, monkeypatch):
    result = graph.invoke({"question": OFF_CORPUS}, context=context(index, max_retrieval_rounds=0,
                                                                    answer_threshold=0.5))
    assert nodes_run(result) == [
        "understand",
        "route",
        "retrieve",
        "rerank",
        "grade",
        "web_search",
        "refine",
        "select",
        "highlight",
        "answer",
    ]
    assert result["trace"][5]["decision"] == "off" and result["abstained"]
    assert result["trace"][-1]["counts"]["context"] > 0  # the passages graded incorrect were read, then withheld
    no_key = graph.invoke(
        {"question": OFF_CORPUS}, context=context(index, web_search=True, max_retrieval_rounds=0)
    )
    assert no_key["trace"][5]["decision"] == "unavailable" and "TAVILY_API_KEY" in no_key["trace"][5]["note"]


def test_russian_question_abstains_in_russian_and_debug_keeps_passages(index):
    result = graph.invoke(
        {"question": "Сколько жителей в Токио?"},
        context=context(index, max_retrieval_rounds=0, debug=True, answer_threshold=0.5)
    )
    assert result["language"] == "ru" and result["abstained"]
    assert "недостаточно информации" in result["answer"]
    assert "retrieve_0" in result["debug"] and "rerank" in result["debug"]


def test_every_trace_record_has_the_agreed_fields(index):
    result = graph.invoke({"question": IN_CORPUS}, context=context(index))
    for entry in result["trace"]:
        assert {"node", "decision", "counts", "top_scores", "duration_ms"} <= set(entry)
        assert entry["duration_ms"] >= 0


def test_multihop_route_runs_the_planner_then_grades_its_evidence(index):
    result = graph.invoke({"question": IN_CORPUS}, context=context(index, multihop="always"))
    ran = nodes_run(result)
    assert ran[0] == "understand" and ran[-3:] == ["select", "highlight", "answer"]
    assert {"decompose", "validate", "compile", "translate", "execute", "grade"} <= set(ran)
    assert ran.index("execute") < ran.index("grade") and "retrieve" not in ran
    assert result["verdict"] == "correct"
    assert result["citations"] and result["citations"][0]["source"] == "index"


def test_planned_evidence_graded_incorrect_ends_in_abstention(index):
    result = graph.invoke({"question": OFF_CORPUS}, context=context(index, multihop="always",
                                                                    max_retrieval_rounds=0, answer_threshold=0.5))
    ran = nodes_run(result)
    assert "execute" in ran and result["verdict"] == "incorrect"
    assert result["abstained"] and result["citations"] == []


def test_route_choice_follows_the_setting_and_the_question_shape():
    from nodes.route import choose_route
    from rag.retrieval.analysis import analyse
    from stores.bm25 import BM25Index

    bm25 = BM25Index()
    bm25.add([0, 1], ["a rock band", "the capital of France"])
    bridge = analyse("Which Brenholt rock band released an album called Salt Roads and had a drummer who wrote "
                     "lyrics?", bm25)
    plain = analyse("What is the capital of France?", bm25)
    assert choose_route(bridge, "auto") == "multihop"
    assert choose_route(bridge, "never") == "single"
    assert choose_route(plain, "always") == "multihop"
    assert choose_route(plain, "auto") == "single"
    with pytest.raises(ValueError, match="auto, always or never"):
        choose_route(plain, "sometimes")


@pytest.mark.parametrize(("question", "multihop"), [(IN_CORPUS, "never"), (
    "Which is older, the Volga bridge or the Thames bridge?", "auto")])
def test_the_question_is_analysed_once_per_run(index, monkeypatch, question, multihop):
    from rag.retrieval import analysis

    calls = {"features": 0, "rules": 0}
    features, rules = analysis.query_features, analysis.rule_decomposition

    def counted_features(*args, **kwargs):
        calls["features"] += 1
        return features(*args, **kwargs)

    def counted_rules(*args, **kwargs):
        calls["rules"] += 1
        return rules(*args, **kwargs)

    monkeypatch.setattr(analysis, "query_features", counted_features)
    monkeypatch.setattr(analysis, "rule_decomposition", counted_rules)
    result = graph.invoke({"question": question},
                          context=context(index, multihop=multihop, strategy="auto",
                                          operator={"techniques": {"query_class_alpha": True}}))
    assert ("decompose" in nodes_run(result)) == (multihop == "auto")  # the planner reads the same analysis
    assert calls == {"features": 1, "rules": 1}, nodes_run(result)
