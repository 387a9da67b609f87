"""The router's escalation and enumeration paths through the real graph on a tiny index.

Escalation: each re-retrieval round moves one step along the chain (hybrid -> graph -> comprehensive ->
full_document) and the grade node keeps the best-graded round, so a later, worse round never replaces an
earlier, better one. Enumeration: "list all ..." reads the whole document and answers with every item.
"""

import pytest

from graph import graph
from nodes.grade import best_attempt
from rag.retrieval.strategy import ESCALATION, escalate
from tests.fixtures.graph import DOCS, build_tiny_index, context, use_keyword_evaluator

DEPARTMENTS = ["Low-temperature physics", "Magnetism", "Theoretical physics", "Cryogenic engineering",
               "Optics", "Plasma physics", "Crystal growth"]
INSTITUTE = {
    "id": "institute",
    "title": "Institute for Physical Problems",
    "text": "The Institute for Physical Problems was founded in 1934 in Moscow.\n\n"
            + "It has seven departments:\n\n" + "\n".join(f"- {d}" for d in DEPARTMENTS[:4])
            + "\n\n" + " ".join(["The institute's laboratories share one cryogenic plant."] * 40)
            + "\n\n" + "\n".join(f"- {d}" for d in DEPARTMENTS[4:]),
}

OTDELY = ["Физика низких температур", "Магнетизм", "Теоретическая физика"]
INSTITUTE_RU = {
    "id": "institut",
    "title": "Институт физических проблем",
    "text": "Институт физических проблем основан в 1934 году. В институте три отдела:\n\n"
            + "\n".join(f"{i}. {d}" for i, d in enumerate(OTDELY, 1)),
}


@pytest.fixture
def index(tmp_path, tiny_embedder_dir):
    return build_tiny_index(tmp_path, tiny_embedder_dir, [*DOCS, INSTITUTE, INSTITUTE_RU])


def test_the_chain_moves_one_step_per_round_and_ends():
    strategy = {"name": "hybrid", "mode": None, "enable": [], "allowed": None, "tier": None}
    seen = []
    while strategy is not None:
        seen.append(strategy["name"])
        strategy = escalate(strategy)
    assert seen == list(ESCALATION[1:])
    assert escalate({"name": "manual"})["name"] == "graph", "the Context's own switches escalate as hybrid"


def test_best_attempt_never_takes_a_worse_later_round():
    first = {"round": 0, "best": 0.4, "candidates": [{"id": "a"}], "grades": [0.4], "verdict": "ambiguous"}
    worse = {"round": 1, "best": -0.2, "candidates": [{"id": "b"}], "grades": [-0.2], "verdict": "incorrect"}
    better = {"round": 2, "best": 0.6, "candidates": [{"id": "c"}], "grades": [0.6], "verdict": "correct"}
    assert best_attempt(first, worse) is first
    assert best_attempt(best_attempt(first, worse), better) is better
    assert best_attempt({}, worse) is worse


def test_escalation_keeps_the_best_graded_round_across_attempts(index, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    # thresholds no round can pass: every round is graded incorrect and the loop runs its whole budget
    settings = context(index, max_retrieval_rounds=3, operator={"grade": {"upper": 1.0, "lower": 1.0}})
    state = graph.invoke({"question": "Which river flows into the Caspian Sea near Kazan?"}, context=settings)
    grades = [r for r in state["trace"] if r["node"] == "grade"]
    escalations = [r["decision"] for r in state["trace"] if r["node"] == "route"][1:]
    assert len(grades) == 4 and [d.split(" -> ")[1] for d in escalations] == list(ESCALATION[2:])
    round_best = [max(r["top_scores"], default=-1.0) for r in grades]
    kept = max(range(len(round_best)), key=lambda i: (round_best[i], i))  # a tie goes to the newer round
    for later, best in zip(grades[kept + 1:], round_best[kept + 1:], strict=True):
        assert best < round_best[kept] and f"kept round {kept}'s passages" in later["note"]
    assert any("kept round" in r.get("note", "") for r in grades), "this question's later rounds grade worse"


def test_an_escalation_budget_of_zero_answers_from_the_first_round(index, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    state = graph.invoke({"question": "Which river flows into the Caspian Sea?"},
                         context=context(index, max_retrieval_rounds=0,
                                         operator={"grade": {"upper": 1.0, "lower": 1.0}}))
    assert not [r for r in state["trace"] if r["node"] == "rewrite"]
    assert len([r for r in state["trace"] if r["node"] == "grade"]) == 1


@pytest.mark.parametrize(("question", "doc_id", "items"), [
    ("List all departments of the Institute for Physical Problems", "institute", DEPARTMENTS[:4]),
    ("Перечисли все отделы Института физических проблем", "institut", OTDELY),
])
def test_an_enumeration_question_is_answered_with_the_list_the_document_gives(index, monkeypatch, question, doc_id,
                                                                             items):
    use_keyword_evaluator(monkeypatch)
    # BM25 only: the tiny embedder's random vectors would pick the documents by chance
    settings = context(index, operator={"grade": {"lower": -1.0}, "retrieval": {"mode": "bm25"}})
    state = graph.invoke({"question": question}, context=settings)
    assert state["strategy"]["name"] == "full_document"
    # answer_threshold 0 here: every other list the readings found is gathered after the one chosen
    assert [item["text"] for item in state["items"]][:len(items)] == items
    assert state["answer"].startswith(", ".join(items) + " [1]")
    assert state["citations"][0]["doc_id"] == doc_id and {i["n"] for i in state["items"][:len(items)]} == {1}
    answer = [r for r in state["trace"] if r["node"] == "answer"][0]
    assert "items found in" in answer["note"]


def test_a_single_answer_question_keeps_a_single_answer(index, monkeypatch):
    use_keyword_evaluator(monkeypatch)
    state = graph.invoke({"question": "When was the Institute for Physical Problems founded?"},
                         context=context(index, operator={"grade": {"lower": -1.0}, "retrieval": {"mode": "bm25"}}))
    assert not state.get("items") and "1934" in state["answer"]
