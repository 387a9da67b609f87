"""The truthfulness benchmark: CRAG-style scoring, the seeded unanswerable share, the index without their gold
passages, and the runner asking those questions of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cragraph.evaluation.qa_metrics import score_record
from cragraph_lab.datasets import Dataset, Question, load_dataset
from cragraph_lab.qa import ResultsLog, run_questions, summarize, truth_table
from cragraph_lab.unanswerable import choose_unanswerable, reduced_index, removed_documents


def _record(answer: str, abstained: bool = False) -> dict:
    return {"answers": ["Pyotr Kapitsa"], "answer": answer, "abstained": abstained, "context": []}


def test_correct_answers_score_plus_one_abstentions_zero_and_wrong_answers_minus_one():
    right, abstained, wrong = (score_record(_record("Pyotr Kapitsa [1]")),
                               score_record(_record("I do not have enough information.", abstained=True)),
                               score_record(_record("Lev Landau [1]")))
    assert (right["Truth"], abstained["Truth"], wrong["Truth"]) == (1.0, 0.0, -1.0)
    assert (right["Halluc"], abstained["Halluc"], wrong["Halluc"]) == (0.0, 0.0, 1.0)


def _questions(n: int) -> list[Question]:
    return [Question(id=f"q{i}", question=f"question {i}", answers=[f"answer {i}"], supporting_ids=[f"d{i}"])
            for i in range(n)]


def test_the_unanswerable_share_is_seeded_and_checked():
    questions = _questions(10)
    chosen = choose_unanswerable(questions, 0.5, seed=13)
    assert len(chosen) == 5 and chosen == choose_unanswerable(list(reversed(questions)), 0.5, seed=13)
    assert chosen != choose_unanswerable(questions, 0.5, seed=14)
    assert choose_unanswerable(questions, 0.0) == set() and len(choose_unanswerable(questions, 1.0)) == 10
    assert removed_documents(questions, {"q1", "q3"}) == {"d1", "d3"}
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            choose_unanswerable(questions, bad)


def _toy_dataset(tmp_path: Path) -> Dataset:
    folder = tmp_path / "toy"
    folder.mkdir()
    rows = [{"id": f"d{i}", "title": f"Doc {i}", "text": f"The river {i} flows through the city {i}."}
            for i in range(4)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "questions.jsonl").write_text(json.dumps(
        {"id": "q0", "question": "river 0?", "answers": ["0"], "supporting_ids": ["d0"]}) + "\n", encoding="utf-8")
    return load_dataset(folder)


def test_the_reduced_index_lacks_the_removed_documents_and_is_built_once(tmp_path, tiny_embedder_dir, capsys):
    dataset = _toy_dataset(tmp_path)
    bundle = reduced_index(dataset, {"d0", "d2"}, str(tiny_embedder_dir), tmp_path / "indexes", progress=False)
    assert bundle.docstore.document_ids() == {"d1", "d3"}
    assert "without 2 gold documents" in capsys.readouterr().out
    again = reduced_index(dataset, {"d2", "d0"}, str(tiny_embedder_dir), tmp_path / "indexes", progress=False)
    assert again.path == bundle.path and "indexed" not in capsys.readouterr().out  # opened, not rebuilt


def _runner(found: bool):
    def run(question: str) -> dict:
        number = question.split()[-1]
        if found:
            return {"answer": f"answer {number} [1]", "abstained": False, "context": [f"answer {number}"]}
        return {"answer": "wrong guess", "abstained": False, "context": []}
    return run


def test_unanswerable_questions_are_asked_of_the_reduced_runners_and_scored_apart(tmp_path):
    dataset = Dataset(name="toy", folder=Path("."), questions=_questions(4))
    log = ResultsLog(tmp_path / "results.jsonl")
    records = run_questions(dataset, {"crag": _runner(True)}, log, progress=False,
                            reduced={"crag": _runner(False)}, unanswerable={"q1", "q2"})
    flagged = {r["id"] for r in records if r.get("unanswerable")}
    assert flagged == {"q1", "q2"}
    summary = summarize(records, ["crag"], None, {q.id for q in dataset.questions})
    assert summary["crag"]["answerable"]["Truth"] == 1.0
    assert summary["crag"]["unanswerable"]["Truth"] == -1.0 and summary["crag"]["unanswerable"]["Halluc"] == 1.0
    assert summary["crag"]["metrics"]["Truth"] == 0.0
    table = truth_table(summary)
    assert "Truth (unanswerable)" in table.splitlines()[0] and "| crag | 0.000 |" in table


def test_the_gold_passages_reference_reads_the_gold_documents_the_index_holds(tmp_path, tiny_embedder_dir):
    from cragraph_lab.retrieval import dataset_index
    from rag.retrieval.full_document import read_documents
    from rag.retrieval.retriever import HybridRetriever

    dataset = _toy_dataset(tmp_path)
    full = dataset_index(dataset, str(tiny_embedder_dir), tmp_path / "indexes", progress=False)
    reduced = reduced_index(dataset, {"d0"}, str(tiny_embedder_dir), tmp_path / "indexes", progress=False)
    found = read_documents(HybridRetriever(full), {"d2": 1.0, "d0": 1.0})  # the gold row's lookup, in gold order
    assert [(hit.chunk.doc_id, hit.chunk.text) for hit in found] == [
        ("d2", "The river 2 flows through the city 2."), ("d0", "The river 0 flows through the city 0.")]
    assert read_documents(HybridRetriever(reduced), {"d0": 1.0}) == []  # an unanswerable question's gold is gone
