"""The QA suite's generator: losses to peers, the results page and the README section between the markers,
rendered from tiny fake reports without answering anything; the settings and index guards of resumed runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cragraph_lab.qa import QASettings, check_resumable, index_changed
from cragraph_lab.qa_suite import (
    README_END,
    README_START,
    SuiteConfig,
    loss_lines,
    losses,
    render,
    replace_between_markers,
    suite_command,
)


def _mode(contains: float, abstain: float, p50: float) -> dict:
    metrics = {"EM": contains, "F1": 0.05, "Contains": contains, "SemMatch": contains, "InContext": 0.9,
               "CtxChars": 500 * abstain, "CitePrec": 0.8, "Abstain": abstain, "Truth": contains - abstain,
               "Halluc": abstain, "R@5": 1.0, "p50_ms": p50, "p95_ms": p50 * 2}
    return {"metrics": metrics, "recall_curve": [0.5, 1.0], "errors": 0, "web_needed": 0,
            "stages": {"retrieve": {"runs": 3, "p50_ms": 1.0, "p95_ms": 2.0}},
            "by_type": {"bridge": {"questions": 3, **metrics}}}


def _report(name: str, crag_contains: float) -> dict:
    return {
        "dataset": name, "questions": 3, "finished_at": "2026-11-21T10:00:00Z",
        "index": {"path": "/idx", "documents": 4, "chunks": 5, "embedder": "e5-small", "reused_as_is": False},
        "settings": {"semantic_thresholds": {"en": 0.78, "ru": 0.8, "zh": 0.85}},
        "machine": {"python": "3.11.7", "cpu_model": "Test CPU 9000", "cpu_count": 2, "memory_gib": 8.0,
                    "os": "Linux 6", "omp_num_threads": "1", "git_commit": "abc1234",
                    "packages": {"langgraph": "1.2.22", "torch": None}},
        "modes": {"plain": _mode(0.6, 0.1, 900.0), "crag": {**_mode(crag_contains, 0.3, 200.0), "against_plain": {
                      metric: {"mean": crag_contains - 0.6, "low": crag_contains - 0.7, "high": crag_contains - 0.5,
                               "questions": 3} for metric in ("EM", "Contains", "Truth")}},
                  "rank-bm25": {**_mode(0.6, 0.1, 800.0), "against_plain": {
                      metric: {"mean": 0.0, "low": -0.1, "high": 0.1, "questions": 3}
                      for metric in ("EM", "Contains", "Truth")}},
                  "binary-crag": _mode(0.3, 0.5, 30.0)},
    }


def test_losses_list_every_metric_where_ours_is_worse_with_direction():
    summary = _report("toy", 0.5)["modes"]
    found = losses(summary)
    by_key = {(loss.ours, loss.metric, loss.peer) for loss in found}
    assert ("crag", "Contains", "rank-bm25") in by_key           # higher is better: .5 < .6
    assert ("crag", "Halluc", "rank-bm25") in by_key             # lower is better: .3 > .1
    assert not any(loss.metric in ("Abstain", "CtxChars") for loss in found)  # descriptive, not compared
    assert ("plain", "p50_ms", "rank-bm25") in by_key            # slower than rank-bm25
    assert ("crag", "Contains", "binary-crag") not in by_key     # .5 beats .3
    assert ("plain", "Contains", "rank-bm25") not in by_key      # a tie is no loss
    assert not any(loss.ours in ("rank-bm25", "binary-crag") for loss in found)  # peers are never "ours"
    lines = loss_lines(found)
    assert "- crag Contains 0.500 < rank-bm25 0.600" in lines
    assert any(line.startswith("- crag Halluc 0.300 > rank-bm25 0.100") for line in lines)


def test_replace_between_markers_keeps_everything_outside():
    text = f"# T\nbefore\n{README_START}\nold\n{README_END}\nafter\n"
    replaced = replace_between_markers(text, "new table")
    assert replaced == f"# T\nbefore\n{README_START}\nnew table\n{README_END}\nafter\n"
    with pytest.raises(ValueError, match="markers"):
        replace_between_markers("no markers here", "x")


def _finished_runs(tmp_path: Path) -> SuiteConfig:
    config = SuiteConfig(sets=["toy_a", "toy_b"], out=tmp_path / "runs", docs=tmp_path / "docs" / "qa_results.md",
                         notes=tmp_path / "docs" / "notes.md", readme=tmp_path / "README.md")
    for name, crag in (("toy_a", 0.5), ("toy_b", 0.7)):
        run = config.run_dir(name)
        run.mkdir(parents=True)
        (run / "report.json").write_text(json.dumps(_report(name, crag)), encoding="utf-8")
        (run / "recall_at_k.png").write_bytes(b"\x89PNG fake")
    (config.out / "semantic_calibration.json").write_text(json.dumps({
        "offset": 3, "size": 2, "mode": "plain", "questions_per_set": {"toy_a": 0, "toy_b": 2},
        "per_script": {"en": {"threshold": 0.781, "balanced_accuracy": 0.9, "tpr": 0.8, "fpr": 0.1, "pairs": 4,
                              "positives": 2}},
        "thresholds": {"en": 0.781, "ru": 0.795, "zh": 0.845}, "fallback_scripts": ["ru", "zh"]}),
        encoding="utf-8")
    config.notes.parent.mkdir(parents=True)
    config.notes.write_text("CRAG abstains on toy_a because grading is uncalibrated.\n", encoding="utf-8")
    config.readme.write_text(f"# Project\nintro\n{README_START}\nold results\n{README_END}\n## Install\n",
                             encoding="utf-8")
    return config


def test_render_writes_docs_plots_and_only_the_readme_section(tmp_path):
    config = _finished_runs(tmp_path)
    docs = render(config, suite_command(config))
    page = docs.read_text(encoding="utf-8")
    assert "| crag | 0.50 / 0.20 / 200 | 0.70 / 0.40 / 200 |" in page       # summary across sets
    assert "- crag Contains 0.500 < rank-bm25 0.600" in page                 # toy_a's computed loss
    assert "| crag | EM - plain | -0.100 [-0.200, +0.000] | +0.100 [+0.000, +0.200] |" in page  # across sets
    assert "| crag | -0.100 [-0.200, +0.000] | -0.100 [-0.200, +0.000] |" in page  # toy_a's own table
    assert "| rank-bm25 | Truth - plain | +0.000 [-0.100, +0.100] |" in page  # the page pairs the peers too
    assert "### toy_b" in page and "| crag | bridge | 3 |" in page          # per-set and per-type tables
    assert "CRAG abstains on toy_a because grading is uncalibrated." in page  # hand-written notes
    assert "questions 4-5 of each set" in page and "0.781" in page           # the calibration slice
    assert "toy_a has no questions after the reported ones" in page
    assert "Test CPU 9000, 2 cores, 8.0 GiB RAM, Linux 6" in page and "langgraph 1.2.22" in page
    assert "OMP_NUM_THREADS=1 python -m cragraph_lab eval qa-suite --sets toy_a,toy_b" in page
    assert "2026-11-21" in page
    assert (tmp_path / "docs" / "qa_results" / "toy_a-recall_at_k.png").read_bytes() == b"\x89PNG fake"
    assert "(qa_results/toy_a-recall_at_k.png)" in page
    readme = config.readme.read_text(encoding="utf-8")
    assert readme.startswith(f"# Project\nintro\n{README_START}\n") and readme.endswith(f"{README_END}\n## Install\n")
    assert "old results" not in readme and "[docs/qa_results.md](docs/qa_results.md)" in readme
    assert "| crag | 0.50 / 0.20 / 200 | 0.70 / 0.40 / 200 |" in readme
    assert "| crag | Truth - plain | -0.100 [-0.200, +0.000] | +0.100 [+0.000, +0.200] |" in readme
    assert "| rank-bm25 | Truth - plain |" not in readme  # the README pairs our rows only


def test_render_without_runs_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no finished suite runs"):
        render(SuiteConfig(sets=["none"], out=tmp_path), "cmd")


def test_suite_command_names_only_non_default_options():
    assert suite_command(SuiteConfig()) == "OMP_NUM_THREADS=1 python -m cragraph_lab eval qa-suite"
    assert suite_command(SuiteConfig(limit=50)) == "OMP_NUM_THREADS=1 python -m cragraph_lab eval qa-suite --limit 50"


def test_offset_enters_the_fingerprint_only_when_set(tmp_path):
    assert "offset" not in QASettings(dataset="d").fingerprint()   # runs from before offset existed still resume
    assert QASettings(dataset="d", offset=200).fingerprint()["offset"] == 200
    out = tmp_path / "run"
    check_resumable(out, QASettings(dataset="d"), fresh=False)
    (out / "results.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="other settings"):
        check_resumable(out, QASettings(dataset="d", offset=200), fresh=False)


def test_index_changed_compares_the_last_reports_counts(tmp_path):
    assert not index_changed(tmp_path, {"documents": 4, "chunks": 5})  # nothing run yet
    (tmp_path / "report.json").write_text(json.dumps({"index": {"documents": 4, "chunks": 5}}), encoding="utf-8")
    (tmp_path / "results.jsonl").write_text("{}\n", encoding="utf-8")
    assert not index_changed(tmp_path, {"documents": 4, "chunks": 5})
    assert index_changed(tmp_path, {"documents": 9, "chunks": 12})


def test_qa_suite_subcommand_renders_only_from_finished_runs(tmp_path):
    import argparse

    from cragraph_lab.cli.qa import add_eval_qa_suite

    config = _finished_runs(tmp_path)
    parser = argparse.ArgumentParser()
    add_eval_qa_suite(parser.add_subparsers())
    args = parser.parse_args(["qa-suite", "--render-only", "--sets", "toy_a,toy_b", "--out", str(config.out),
                              "--docs", str(config.docs), "--notes", str(config.notes), "--readme",
                              str(config.readme), "--data-root", str(tmp_path / "no-data")])
    assert args.run(args) == 0  # no data folder and no models needed to render
    assert "- crag Contains 0.500 < rank-bm25 0.600" in config.docs.read_text(encoding="utf-8")


def test_the_suite_reads_xquad_from_its_held_back_half_only(tmp_path, monkeypatch):
    import json

    import pytest

    from cragraph_lab.qa_suite import SuiteConfig
    from cragraph_lab.training_data import xquad_part

    config = SuiteConfig()
    if not (config.data_root / "xquad_ru_zh_en" / "en").is_dir():
        pytest.skip("benchmark data not found (a clone without ../shared/data)")
    monkeypatch.setenv("CRAGRAPH_CACHE_DIR", str(tmp_path))
    folder = config.folder("xquad_heldout/ru")
    assert folder.is_relative_to(tmp_path)
    assert config.folder("hotpotqa_migres200") == config.data_root / "hotpotqa_migres200"
    rows = [json.loads(line) for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and {xquad_part(r["supporting_ids"][0]) for r in rows} == {"test"}
