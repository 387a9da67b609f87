"""The CRAG graph with the real embedded models on a 50-passage slice of hotpotqa_migres200.

In-corpus questions -> `correct` and a gold passage cited; off-corpus -> `incorrect`, answered from the
stand-in Tavily server's page with its URL cited; the stand-in failing (429, or hanging past the timeout)
-> abstention
with the failure in the trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph import graph
from rag.config import operator_config
from rag.context import Context
from stores.bundle import IndexBundle, IndexSettings
from tests.fixtures.tavily_stub import TavilyStub

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hotpotqa_migres200"
SLICE = 50
OFF_CORPUS = "What is the boiling point of liquid nitrogen in kelvin?"
WEB_PAGE = {
    "url": "https://example.org/liquid-nitrogen",
    "title": "Liquid nitrogen",
    "score": 0.93,
    "content": "Liquid nitrogen boils at 77 kelvin (-196 °C) at atmospheric pressure. "
    "It is used as a coolant in laboratories.",
}


def read(name: str) -> list[dict]:
    with open(DATA / name, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    if not DATA.exists():
        pytest.skip(f"benchmark data {DATA} is not present (it sits beside the repo in development)")
    corpus = read("corpus.jsonl")[:SLICE]
    ids = {p["id"] for p in corpus}
    questions = [q for q in read("questions.jsonl") if set(q["supporting_ids"]) <= ids]
    folder = tmp_path_factory.mktemp("hotpot")
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(p) for p in corpus) + "\n", encoding="utf-8")
    IndexBundle.build(
        folder / "index", [folder / "corpus.jsonl"], IndexSettings(embedder="e5-small"), progress=False
    )
    return folder / "index", questions


def test_in_corpus_questions_are_correct_and_cite_a_gold_passage(sliced):
    """Every answer that was given cites at least one gold passage, on the CRAG path and on the multi-hop plan.
    A `correct` grade keeps its passages, so such a question is answered unless the reader itself is not
    confident enough (answer_threshold)."""
    index, questions = sliced
    assert len(questions) >= 4, "the slice holds too few questions with all their gold passages"
    correct = 0
    for question in questions:
        for route in ("never", "always"):
            result = graph.invoke(
                {"question": question["question"]},
                context=Context(index=str(index), web_search=False, multihop=route),
            )
            if not result["abstained"]:
                cited_docs = {c["doc_id"] for c in result["citations"]}
                assert cited_docs & set(question["supporting_ids"]), (route, question["question"], cited_docs)
            if route == "never":
                correct += result["verdict"] == "correct"
                if result["verdict"] == "correct" and result["abstained"]:  # only the reader may doubt it
                    note = next(e.get("note") or "" for e in result["trace"] if e["node"] == "answer")
                    assert "answer_threshold" in note, result["trace"]
            else:
                assert "execute" in {entry["node"] for entry in result["trace"]}
    assert correct >= 2


def test_off_corpus_question_is_answered_from_the_web_with_its_url(sliced, monkeypatch):
    index, _ = sliced
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")
    with TavilyStub([WEB_PAGE]) as stub:
        context = Context(index=str(index), web_search=True, answer_threshold=0.0)
        with operator_config(web={"base_url": stub.url}):
            result = graph.invoke({"question": OFF_CORPUS}, context=context)
    assert result["verdict"] == "incorrect", result["trace"]
    assert [c["url"] for c in result["citations"]] == [WEB_PAGE["url"]]
    assert result["answer"].startswith("77") and "77 kelvin" in result["evidence"][0]["sentence"]
    assert stub.requests and "nitrogen" in stub.requests[0]["json"]["query"]


@pytest.mark.parametrize("mode", ["429", "hang"])
def test_failing_web_ends_in_abstention_with_a_trace_entry(sliced, monkeypatch, mode):
    index, _ = sliced
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")
    with TavilyStub([WEB_PAGE], mode=mode, hang_s=4) as stub:
        context = Context(index=str(index), web_search=True)
        with operator_config(web={"base_url": stub.url, "timeout_s": 1.0}):
            result = graph.invoke({"question": OFF_CORPUS}, context=context)
    assert result["abstained"] and result["citations"] == []
    web = [e for e in result["trace"] if e["node"] == "web_search"]
    assert len(web) == 1 and web[0]["decision"] == (
        "failed:rate_limit" if mode == "429" else "failed:timeout"
    )
    assert result["trace"][-1]["node"] == "answer" and result["trace"][-1]["decision"] == "abstain"
