"""answer: extractive citations and evidence, abstention per language, validated LLM answers and fallbacks."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

import cragraph.models.structured
from cragraph.context import Context
from cragraph.models.scripted import ScriptedChatModel
from nodes.answer import answer

CONTEXT = [
    {
        "id": "volga#0",
        "doc_id": "volga",
        "title": "Volga",
        "text": "The Volga flows into the Caspian Sea. It is long.",
        "source": "index",
        "url": None,
        "strips": [
            {"text": "The Volga flows into the Caspian Sea.", "score": 0.9},
            {"text": "It is long.", "score": -0.1},
        ],
    },
    {
        "id": "https://example.org/kazan",
        "doc_id": None,
        "title": "Kazan",
        "text": "Kazan stands on the Volga.",
        "source": "web",
        "url": "https://example.org/kazan",
        "strips": [{"text": "Kazan stands on the Volga.", "score": 0.4}],
    },
]
STATE = {
    "question": "Where does the Volga flow?",
    "language": "en",
    "selected": CONTEXT,
    "verdict": "correct",
}


def run(state, **settings):
    return answer(state, Runtime(context=Context(**settings)))


def scripted(monkeypatch, reply):
    model = ScriptedChatModel(responses=[reply])
    monkeypatch.setattr(cragraph.models.structured, "load_chat_model", lambda spec: model)
    return model


def test_extractive_answer_cites_the_best_sentences_in_order():
    result = run(STATE, answer_sentences=2, answer_min_score=0.0)
    assert result["answer"] == "The Volga flows into the Caspian Sea. [1] Kazan stands on the Volga. [2]"
    assert [c["id"] for c in result["citations"]] == ["volga#0", "https://example.org/kazan"]
    assert (
        result["citations"][1]["url"] == "https://example.org/kazan"
        and result["citations"][1]["source"] == "web"
    )
    assert [e["n"] for e in result["evidence"]] == [1, 2] and not result["abstained"]


def test_citations_are_renumbered_when_only_a_later_passage_is_used():
    state = {
        **STATE,
        "selected": [{**CONTEXT[0], "strips": [{"text": "It is long.", "score": -0.5}]}, CONTEXT[1]],
    }
    result = run(state, answer_sentences=1, answer_min_score=0.0)
    assert result["answer"] == "Kazan stands on the Volga. [1]"
    assert [c["id"] for c in result["citations"]] == ["https://example.org/kazan"]


@pytest.mark.parametrize(
    ("language", "phrase"),
    [("en", "not have enough information"), ("ru", "недостаточно информации"), ("zh", "没有足够的信息")],
)
def test_abstains_in_the_question_language(language, phrase):
    result = run({**STATE, "language": language, "selected": []})
    assert result["abstained"] and phrase in result["answer"] and result["citations"] == []
    weak = run({**STATE, "language": language}, answer_min_score=0.95)
    assert weak["abstained"] and "answer_min_score" in weak["trace"][0]["note"]


def test_valid_llm_answer_keeps_its_citations_and_checks_evidence(monkeypatch):
    model = scripted(
        monkeypatch,
        '{"answerable": true, "answer": "Into the Caspian Sea [1].", "citations": [1], '
        '"evidence": ["The Volga flows into the Caspian Sea.", "Made up sentence."]}',
    )
    result = run(STATE, llm_answer=True)
    assert result["answer"] == "Into the Caspian Sea [1]."
    assert [e["sentence"] for e in result["evidence"]] == ["The Volga flows into the Caspian Sea."]
    assert (
        result["trace"][0]["decision"] == "LLM answer"
        and "not found in the context" in result["trace"][0]["note"]
    )
    assert "[2] Kazan: Kazan stands on the Volga." in model.prompts[0]


def test_llm_answer_citing_only_the_second_passage_is_renumbered(monkeypatch):
    scripted(
        monkeypatch, '{"answerable": true, "answer": "Kazan is on it [2].", "citations": [2], "evidence": []}'
    )
    result = run(STATE, llm_answer=True)
    assert (
        result["answer"] == "Kazan is on it [1]."
        and result["citations"][0]["id"] == "https://example.org/kazan"
    )
    assert result["evidence"][0]["sentence"] == "Kazan stands on the Volga."


@pytest.mark.parametrize(
    "reply",
    [
        "The Volga flows into the Caspian Sea.",  # not JSON
        '{"answer": "Caspian"}',  # missing answerable
        '{"answerable": true, "answer": "Caspian [7]", "citations": [7]}',  # citation out of range
        '{"answerable": true, "answer": "Caspian", "citations": []}',  # no citation
    ],
)
def test_invalid_llm_answer_falls_back_to_extractive(monkeypatch, reply):
    scripted(monkeypatch, reply)
    result = run(STATE, llm_answer=True, answer_sentences=1)
    assert result["answer"] == "The Volga flows into the Caspian Sea. [1]"
    assert result["trace"][0]["decision"] == "extractive answer"
    assert "extractive answer used" in result["trace"][0]["note"]


def test_llm_saying_unanswerable_abstains(monkeypatch):
    scripted(monkeypatch, '{"answerable": false}')
    result = run({**STATE, "language": "ru"}, llm_answer=True)
    assert result["abstained"] and "недостаточно" in result["answer"]
