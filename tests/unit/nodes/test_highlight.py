"""highlight: evidence sentences per selected passage, exact offsets, limits, and context compression."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from nodes.answer import answer
from nodes.highlight import choose_evidence, highlight
from tests.fixtures.graph import DOCS, build_tiny_index, context, use_keyword_evaluator

QUESTION = "Which sea does the Volga river flow into?"


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("highlight-index"), tiny_embedder_dir)


@pytest.fixture(autouse=True)
def keyword_scores(monkeypatch):
    use_keyword_evaluator(monkeypatch)


def passage(doc_id: str) -> dict:
    doc = next(d for d in DOCS if d["id"] == doc_id)
    return {"id": f"{doc_id}#0", "doc_id": doc_id, "title": doc["title"], "text": doc["text"], "language": "en",
            "source": "index", "url": None, "score": 0.5, "coverage_gain": 0.1}


def selected() -> list[dict]:
    return [passage("volga"), passage("kazan"), passage("curie")]


def run(index, state: dict, per_passage: int = 2, total: int = 8, lower: float = -0.9, **settings) -> dict:
    """The highlight node; `lower`, the operator's grade threshold, is the least score highlighted."""
    operator = {"strips": {"min_chars": 1}, "grade": {"lower": lower},
                "highlight": {"per_passage": per_passage, "total": total}}
    return highlight(state, Runtime(context=context(index, operator=operator, **settings)))


def sentences_of(result: dict) -> dict[str, list[str]]:
    return {h["passage_id"]: [s["text"] for s in h["sentences"]] for h in result["highlights"]}


def test_offsets_point_at_the_sentence_in_the_passage_text(index):
    state = {"question": QUESTION, "selected": selected()}
    result = run(index, state, per_passage=3, total=9)
    text_of = {p["id"]: p["text"] for p in state["selected"]}
    assert result["highlights"], "nothing highlighted"
    for item in result["highlights"]:
        assert state["selected"][item["number"] - 1]["id"] == item["passage_id"]
        for sentence in item["sentences"]:
            assert text_of[item["passage_id"]][sentence["start"]:sentence["end"]] == sentence["text"]
    assert "The Volga is the longest river in Europe." in sentences_of(result)["volga#0"]
    assert "selected" not in result  # compression off: the context is left as select chose it


def test_refined_passages_are_located_in_their_source_text(index):
    original = passage("volga")
    kept = "It flows into the Caspian Sea."
    start = original["text"].index(kept)
    refined = {**original, "text": kept, "original_chars": len(original["text"]),
               "strips": [{"text": kept, "start": start, "end": start + len(kept), "score": 0.7}]}
    result = run(index, {"question": QUESTION, "selected": [refined]})
    (only,) = result["highlights"][0]["sentences"]
    assert (only["start"], only["end"], only["score"]) == (start, start + len(kept), 0.7)
    assert original["text"][only["start"]:only["end"]] == kept


def test_best_sentences_win_within_the_per_passage_and_total_limits(index):
    state = {"question": QUESTION, "selected": selected()}
    result = run(index, state, per_passage=1, total=2)
    assert sum(len(h["sentences"]) for h in result["highlights"]) == 2
    assert all(len(h["sentences"]) == 1 for h in result["highlights"])
    assert sentences_of(result)["volga#0"] == ["It flows into the Caspian Sea."]
    assert "curie#0" not in sentences_of(result)  # nothing about the Volga in it, and the total is spent
    strict = run(index, state, per_passage=3, total=9, lower=0.0)
    assert all(s["score"] >= 0.0 for h in strict["highlights"] for s in h["sentences"])


def test_each_passage_gets_its_best_sentence_before_any_gets_a_second():
    units = [
        {"n": 1, "start": 0, "score": 0.9}, {"n": 1, "start": 10, "score": 0.8}, {"n": 2, "start": 0, "score": 0.1},
    ]
    kept = choose_evidence(units, per_passage=2, total=2, min_score=-1.0)
    assert {n: [u["start"] for u in group] for n, group in kept.items()} == {1: [0], 2: [0]}


def test_sub_questions_of_a_plan_get_their_evidence_too(index):
    state = {"question": QUESTION, "selected": selected()}
    without = run(index, state, lower=-0.5)
    assert "curie#0" not in sentences_of(without)
    planned = run(index, {**state, "facets": ["Who founded the Radium Institute?"]}, lower=-0.5)
    curie = next(h for h in planned["highlights"] if h["passage_id"] == "curie#0")["sentences"]
    best = max(curie, key=lambda s: s["score"])
    assert best["text"] == "She founded the Radium Institute in Paris." and best["score"] == 1.0


def test_compression_shrinks_the_context_keeps_ids_and_feeds_the_answer(index):
    state = {"question": QUESTION, "selected": selected(), "language": "en"}
    result = run(index, state, compress_context=True, per_passage=1, total=2)
    compressed = result["selected"]
    assert [p["id"] for p in compressed] == [p["id"] for p in state["selected"]]
    assert [p["title"] for p in compressed] == [p["title"] for p in state["selected"]]
    assert all(p["coverage_gain"] == 0.1 and p["compressed"] for p in compressed)
    assert compressed[0]["text"] == "It flows into the Caspian Sea."
    for before, after in zip(state["selected"], compressed, strict=True):
        assert len(after["text"]) < len(before["text"]) and after["original_chars"] == len(before["text"])
        assert all(after["text"][s["start"]:s["end"]] == s["text"] for s in after["strips"])
    counts = result["trace"][0]["counts"]
    assert counts["chars_before"] == sum(len(p["text"]) for p in state["selected"])
    assert counts["chars_after"] == sum(len(p["text"]) for p in compressed)
    assert counts["saved_ratio"] == pytest.approx(1 - counts["chars_after"] / counts["chars_before"], abs=1e-4)
    reply = answer({**state, "selected": compressed}, Runtime(context=context(index)))
    kept_texts = {s["text"] for p in compressed for s in p["strips"]}
    assert reply["evidence"] and all(e["sentence"] in kept_texts for e in reply["evidence"])


def test_switched_off_the_node_leaves_everything_alone(index):
    state = {"question": QUESTION, "selected": selected()}
    result = run(index, state, highlight=False, compress_context=True)
    assert result["highlights"] == [] and "selected" not in result
    assert result["trace"][0]["node"] == "highlight" and result["trace"][0]["decision"] == "highlighting off"
    empty = run(index, {"question": QUESTION, "selected": []}, compress_context=True)
    assert empty["highlights"] == [] and "selected" not in empty
