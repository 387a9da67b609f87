"""cragraph_lab/ask_latency.py: the questions file, the timings gathered from each run's trace, and the table."""

from __future__ import annotations

import sys
import types

from cragraph_lab.ask_latency import StageLatencies, latency_report, measure_stage_latencies, read_questions


def test_read_questions_skips_blank_lines_and_comments(tmp_path):
    path = tmp_path / "questions.txt"
    path.write_text("# header\nWho founded it?\n\n   # indented comment\n  Where is it?  \n", encoding="utf-8")
    assert read_questions(path) == ["Who founded it?", "Where is it?"]


def test_stage_latencies_sum_each_nodes_runs_per_question_after_one_warm_up(monkeypatch):
    calls = []

    class FakeGraph:
        def invoke(self, state, context):
            calls.append((state["question"], context.index, context.web_search))
            return {"trace": [{"node": "retrieve", "duration_ms": 10.0}, {"node": "grade", "duration_ms": 4.0},
                              {"node": "retrieve", "duration_ms": 6.0}]}

    monkeypatch.setitem(sys.modules, "graph", types.SimpleNamespace(graph=FakeGraph()))
    result = measure_stage_latencies("ix", ["a", "b"], web=False)
    assert calls == [("a", "ix", False), ("a", "ix", False), ("b", "ix", False)]  # the first is the warm-up
    assert result.stages == {"retrieve": [16.0, 16.0], "grade": [4.0, 4.0]} and result.totals == [20.0, 20.0]


def test_latency_report_is_the_header_and_a_markdown_table():
    report = latency_report(StageLatencies(questions=2, index="ix", stages={"grade": [1.0, 3.0]}, totals=[5.0, 7.0]))
    lines = report.splitlines()
    assert lines[:4] == ["2 questions, warm process, index ix", "", "| stage | runs | p50_ms | p95_ms |",
                         "|---|---|---|---|"]
    assert lines[4].startswith("| grade | 2 | 2.0 |") and lines[5].startswith("| total | 2 | 6.0 |")
