"""The QA runner: modes, resume from results.jsonl, settings guard, per-stage durations, report tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cragraph_lab.datasets import Dataset, Question
from cragraph_lab.qa import (
    QASettings,
    ResultsLog,
    answer_scores,
    check_resumable,
    expand_modes,
    markdown_table,
    mode_context,
    passage_doc_id,
    ratio_table,
    run_questions,
    stage_durations,
    summarize,
)


def _dataset(n: int) -> Dataset:
    questions = [Question(id=f"q{i}", question=f"question {i}", answers=[f"answer {i}"], supporting_ids=[f"d{i}"],
                          meta={"type": "bridge" if i % 2 else "comparison"}) for i in range(n)]
    return Dataset(name="toy", folder=Path("."), questions=questions)


def _runner(calls: list[str], fail_on: str | None = None):
    def run(question: str) -> dict:
        calls.append(question)
        if question == fail_on:
            raise RuntimeError("boom")
        number = question.split()[-1]
        return {"answer": f"it is answer {number} [1]", "abstained": False, "cited_doc_ids": [f"d{number}"],
                "context": [f"answer {number} is here"], "ranked_doc_ids": ["x", f"d{number}"],
                "stages": {"retrieve": 2.0, "answer": 1.0}}
    return run


def test_expand_modes_adds_chat_model_variants_of_our_modes_only():
    modes = expand_modes(["plain", "crag", "rank-bm25"], ["openai:gpt-4o-mini"])
    assert modes == ["plain", "crag", "rank-bm25", "plain@openai:gpt-4o-mini", "crag@openai:gpt-4o-mini"]
    with pytest.raises(ValueError, match="unknown QA modes"):
        expand_modes(["hybrid"], [])


def test_mode_context_sets_multihop_web_and_llm_answer():
    single, multi = mode_context("idx", "crag"), mode_context("idx", "crag-multihop")
    assert (single.multihop, multi.multihop, single.web_search) == ("never", "auto", False)
    llm = mode_context("idx", "crag@ollama:qwen", {"max_retrieval_rounds": 3})
    assert llm.llm_answer and llm.chat_model == "ollama:qwen" and llm.max_retrieval_rounds == 3
    assert not single.llm_answer


def test_stage_durations_sum_repeated_nodes():
    trace = [{"node": "retrieve", "duration_ms": 10}, {"node": "grade", "duration_ms": 1},
             {"node": "retrieve", "duration_ms": 5.5}]
    assert stage_durations(trace) == {"retrieve": 15.5, "grade": 1.0}


def test_passage_doc_id_reads_passages_and_hit_records():
    assert passage_doc_id({"doc_id": "a"}) == "a"
    assert passage_doc_id({"chunk": {"doc_id": "b"}}) == "b"


def test_interrupted_run_resumes_without_repeating_finished_answers(tmp_path):
    dataset = _dataset(4)
    log = ResultsLog(tmp_path / "results.jsonl")
    first_calls: list[str] = []
    records = run_questions(_dataset(2), {"a": _runner(first_calls), "b": _runner(first_calls)}, log, progress=False)
    assert len(records) == 4
    with open(log.path, "a", encoding="utf-8") as handle:
        handle.write('{"mode": "a", "id": "q2", "answ')  # a line cut short by an interruption
    calls: list[str] = []
    records = run_questions(dataset, {"a": _runner(calls), "b": _runner(calls)}, log, progress=False)
    # two warm-up calls (one per mode), then only q2 and q3 for both modes
    assert calls[2:] == ["question 2", "question 2", "question 3", "question 3"]
    assert sorted((r["mode"], r["id"]) for r in records) == sorted(
        (m, f"q{i}") for m in "ab" for i in range(4))
    assert len(log.load()) == 8  # the cut line is skipped when read back


def test_a_failing_question_is_recorded_not_fatal(tmp_path):
    log = ResultsLog(tmp_path / "results.jsonl")
    calls: list[str] = []
    records = run_questions(_dataset(3), {"a": _runner(calls, fail_on="question 1")}, log, progress=False)
    failed = [r for r in records if r.get("error")]
    assert [r["id"] for r in failed] == ["q1"] and failed[0]["abstained"]
    assert "boom" in failed[0]["error"]


def test_settings_guard_refuses_mixing_and_fresh_starts_over(tmp_path):
    check_resumable(tmp_path, QASettings(dataset="toy", k=5), fresh=False)
    (tmp_path / "results.jsonl").write_text('{"mode": "a", "id": "q0"}\n', encoding="utf-8")
    check_resumable(tmp_path, QASettings(dataset="toy", k=5), fresh=False)  # same settings: resume
    with pytest.raises(ValueError, match="other settings"):
        check_resumable(tmp_path, QASettings(dataset="toy", k=3), fresh=False)
    check_resumable(tmp_path, QASettings(dataset="toy", k=3), fresh=True)
    assert not (tmp_path / "results.jsonl").exists()
    assert json.loads((tmp_path / "settings.json").read_text())["k"] == 3


def test_summary_and_tables(tmp_path):
    log = ResultsLog(tmp_path / "results.jsonl")
    records = run_questions(_dataset(4), {"crag": _runner([]), "rank-bm25": _runner([])}, log, progress=False)
    records.append({**records[0], "id": "not-in-this-run"})
    summary = summarize(records, ["crag", "rank-bm25"], None, {f"q{i}" for i in range(4)})
    metrics = summary["crag"]["metrics"]
    assert metrics["questions"] == 4
    assert metrics["Contains"] == 1.0 and metrics["EM"] == 0.0 and 0 < metrics["F1"] < 1
    assert metrics["R@1"] == 0.0 and metrics["R@2"] == 1.0 and metrics["CitePrec"] == 1.0
    assert summary["crag"]["recall_curve"][:2] == [0.0, 1.0]
    assert set(summary["crag"]["by_type"]) == {"bridge", "comparison"}
    table = markdown_table(summary)
    assert table.splitlines()[0].startswith("| mode | EM | F1 |") and "| crag | 0.000 |" in table
    assert "| crag | rank-bm25 | 1.00 |" in ratio_table(summary)


def test_cli_parser_accepts_the_documented_options():
    import argparse

    from cragraph_lab.cli.qa import add_eval_qa, run_eval_qa

    parser = argparse.ArgumentParser()
    add_eval_qa(parser.add_subparsers())
    args = parser.parse_args(["qa", "--dataset", "d", "--limit", "50", "--modes", "plain,crag",
                              "--chat-model", "openai:gpt-4o-mini", "--out", "o", "--reuse-index"])
    assert (args.dataset, args.limit, args.modes, args.chat_model) == ("d", 50, "plain,crag", ["openai:gpt-4o-mini"])
    assert args.reuse_index and args.out == Path("o") and args.run is run_eval_qa
    defaults = parser.parse_args(["qa", "--dataset", "d"])
    assert defaults.limit == 200 and defaults.chat_model == [] and defaults.k == 5


def test_a_record_names_the_source_and_grade_of_the_passage_its_answer_cites_first() -> None:
    trace = [{"node": "answer", "counts": {"best_evidence": 0.4}}]
    state = {"confidence": 0.97, "margin": 8.2, "citations": [{"id": "https://example.org/a", "source": "web"}],
             "selected": [{"id": "c1", "grade": 0.9}, {"id": "https://example.org/a", "grade": 0.3}, {"id": "c2"}]}
    assert answer_scores(trace, state) == {"confidence": 0.97, "margin": 8.2, "best_evidence": 0.4,
                                           "answer_grade": 0.3, "best_grade": 0.9, "answer_source": "web",
                                           "withheld_confidence": None, "withheld_margin": None,
                                           "abstain_reason": None, "candidates": []}
    assert answer_scores([], {"abstained": True})["answer_source"] is None
    assert answer_scores([], {"abstained": True})["best_grade"] is None


def test_an_abstention_keeps_its_reason_and_the_held_back_spans_confidence_and_margin() -> None:
    why = "Not sure enough (probability 0.31 < answer_threshold 0.5): Paris [1]"
    trace = [{"node": "answer", "decision": "abstain", "counts": {"citations": 0}, "note": why}]
    state = {"abstained": True, "withheld": {"answer": "Paris [1]", "confidence": 0.8, "margin": 5.1, "reason": why}}
    scores = answer_scores(trace, state)
    assert (scores["abstain_reason"], scores["withheld_confidence"], scores["confidence"]) == (why, 0.8, None)
    assert (scores["withheld_margin"], scores["margin"]) == (5.1, None)


def test_summary_pairs_each_mode_with_plain_by_question(tmp_path):
    log = ResultsLog(tmp_path / "results.jsonl")
    records = run_questions(_dataset(4), {"plain": _runner([], fail_on="question 1"), "crag": _runner([])}, log,
                            progress=False)
    summary = summarize(records, ["plain", "crag"], None, {f"q{i}" for i in range(4)})
    assert "against_plain" not in summary["plain"]
    contains = summary["crag"]["against_plain"]["Contains"]
    assert contains["mean"] == 0.25 and contains["questions"] == 4  # plain's failed q1 is crag's one gain
    assert contains["low"] <= 0.25 <= contains["high"]
