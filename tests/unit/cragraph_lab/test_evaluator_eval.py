"""`python -m cragraph_lab eval evaluator` end to end on a tiny dataset folder with the tiny test embedder: the table
has the three scorers, the gold-removed run is graded, and thresholds are stored in the index folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from cragraph_lab.cli.evaluator import add_eval_evaluator, add_train_evaluator
from evaluators.thresholds import THRESHOLDS_FILE, load_thresholds

CORPUS = [
    ("d0", "Old Harbour", "the river flows through the city near the old harbour"),
    ("d1", "Institute", "a scientist founded an institute in the capital"),
    ("d2", "Bridge", "the bridge crosses the river near the harbour"),
    ("d3", "Chemistry", "physics and chemistry were studied in the capital"),
    ("d4", "Capital", "the capital has a river and an old bridge"),
]
QUESTIONS = [("q0", "who founded the institute in the capital", ["d1"]),
             ("q1", "what crosses the river near the harbour", ["d2"]),
             ("q2", "what was studied in the capital", ["d3"])]


@pytest.fixture
def dataset(tmp_path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS), encoding="utf-8")
    (folder / "questions.jsonl").write_text("".join(
        json.dumps({"id": i, "question": q, "answers": [], "supporting_ids": g}) + "\n" for i, q, g in QUESTIONS),
        encoding="utf-8")
    return folder


def test_eval_evaluator_reports_three_scorers_and_stores_thresholds(dataset, tiny_embedder_dir, tmp_path,
                                                                   capsys):
    parser = argparse.ArgumentParser()
    targets = parser.add_subparsers()
    add_eval_evaluator(targets)
    index_root = tmp_path / "indexes"
    store = tmp_path / "my-index"
    store.mkdir()
    out = tmp_path / "report.json"
    args = parser.parse_args(["evaluator", "--dataset", str(dataset), "--evaluator", f"cosine:{tiny_embedder_dir}",
                              "--embedder", str(tiny_embedder_dir), "--index-root", str(index_root),
                              "--store-thresholds", str(store), "--out", str(out), "--quiet"])
    assert args.run(args) == 0
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| ")][1:]
    assert [r.split("|")[1].strip() for r in rows] == [f"cosine:{tiny_embedder_dir}", "cosine", "bm25"]
    report = json.loads(out.read_text())
    assert report["questions"] == 3 and report["pairs"] == 15 and report["positives"] == 3
    for scorer in report["scorers"]:
        assert 0 <= scorer["auc"] <= 1
        assert sum(scorer["removed_counts"].values()) == 3  # every question also ran without its gold
    stored = load_thresholds(store, f"cosine:{tiny_embedder_dir}")
    assert stored is not None and stored.lower <= stored.upper
    assert (store / THRESHOLDS_FILE).is_file()


def test_train_evaluator_command_parses_its_options():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    add_train_evaluator(commands)
    args = parser.parse_args(["train-evaluator", "--seed", "7", "--epochs", "3", "--out", "head.npz"])
    assert (args.seed, args.epochs, args.out, args.data_root) == (7, 3, Path("head.npz"), None) and callable(args.run)
