"""The command line end to end with a tiny real embedder: index, search, eval, bench, and bad input; and the
rule that only cragraph/cli/ parses arguments."""

import ast
import json
from pathlib import Path

import pytest

from cragraph.cli.main import main, parse_filters


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "rivers.jsonl").write_text("\n".join(json.dumps(d) for d in [
        {"id": "volga", "title": "Volga", "text": "The Volga flows into the Caspian Sea.", "category": "geo.river"},
        {"id": "thames", "title": "Thames", "text": "The Thames flows through London.", "category": "geo.river"},
    ]) + "\n", encoding="utf-8")
    (folder / "curie.md").write_text("# Marie Curie\n\nMarie Curie founded the Radium Institute in Paris.\n")
    (folder / "empty.txt").write_text("")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    return folder


def test_index_search_and_delete(corpus, tmp_path, tiny_embedder_dir, capsys):
    index = str(tmp_path / "index")
    assert main(["index", str(corpus), "--index", index, "--embedder", str(tiny_embedder_dir), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "3 documents added" in out and "2 skipped" in out
    assert "empty.txt" in err and "blob.txt" in err
    assert main(["search", "Caspian Sea", "--index", index, "--mode", "bm25", "-k", "2", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["chunk"]["doc_id"] == "volga" and "bm25" in hits[0]["scores"]
    assert main(["search", "flows", "--index", index, "--filter", "category=geo.*", "-k", "5", "--json"]) == 0
    assert {h["chunk"]["doc_id"] for h in json.loads(capsys.readouterr().out)} == {"volga", "thames"}
    assert main(["search", "Radium", "--index", index, "--mode", "bm25", "-k", "1"]) == 0
    assert "curie.md" in capsys.readouterr().out
    assert main(["index", "--delete", "volga", "--index", index]) == 0
    assert "1 deleted" in capsys.readouterr().out


def test_bad_input_gets_a_clear_error(corpus, tmp_path, tiny_embedder_dir, capsys):
    index = str(tmp_path / "index")
    assert main(["index", str(tmp_path / "missing"), "--index", index]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["search", "anything", "--index", str(tmp_path / "nowhere")]) == 1
    assert "no index at" in capsys.readouterr().err
    assert main(["search", "anything", "--index", str(corpus)]) == 1
    assert "not a cragraph index" in capsys.readouterr().err
    assert main(["ask", "Who founded the Radium Institute?", "--index", str(tmp_path / ".cragraph" / "sample")]) == 1
    assert "`make demo` in the project folder builds it" in capsys.readouterr().err  # the README's example, first
    assert main(["index", str(corpus), "--index", index, "--embedder", str(tiny_embedder_dir), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "  ", "--index", index]) == 1
    assert "empty" in capsys.readouterr().err
    assert main(["search", "q" * 100_000, "--index", index]) == 1
    assert "limit" in capsys.readouterr().err
    unreadable = tmp_path / "unreadable"
    unreadable.mkdir()
    (unreadable / "x.bin").write_bytes(b"\x00\x00")
    assert main(["index", str(unreadable), "--index", index, "--rebuild", "--quiet"]) == 1
    assert "no readable documents" in capsys.readouterr().err
    assert main(["search", "Volga", "--index", index, "-k", "1"]) == 0, "the old index must stay usable"


def test_ask_with_damaged_reader_weights_names_the_file_without_a_traceback(
    corpus, tmp_path, tiny_embedder_dir, capsys, monkeypatch
):
    index = str(tmp_path / "index")
    assert main(["index", str(corpus), "--index", index, "--embedder", str(tiny_embedder_dir), "--quiet"]) == 0
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "config.json").write_text("{}")
    (weights / "reader.npz").write_bytes(b"not a zip")
    monkeypatch.setenv("CRAGRAPH_ANSWER__READER_PATH", str(weights))  # read when the command starts
    capsys.readouterr()
    assert main(["ask", "Where does the Volga flow?", "--index", index]) == 1
    err = capsys.readouterr().err
    assert "config.json: lacks split" in err and "python -m cragraph_lab bench reader-training" in err
    assert "Traceback" not in err


def test_eval_retrieval_prints_the_table_and_writes_json(tmp_path, tiny_embedder_dir, capsys):
    from cragraph_lab.cli.main import main

    data = tmp_path / "set"
    data.mkdir()
    (data / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in [
        {"id": "p1", "title": "Volga", "text": "The Volga flows into the Caspian Sea."},
        {"id": "p2", "title": "Thames", "text": "The Thames flows through London."},
        {"id": "p3", "title": "Curie", "text": "Marie Curie founded the Radium Institute."},
    ]) + "\n")
    (data / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in [
        {"id": "q1", "question": "Which river flows into the Caspian Sea?", "answers": ["Volga"],
         "supporting_ids": ["p1"]},
        {"id": "q2", "question": "Who founded the Radium Institute?", "answers": ["Curie"],
         "supporting_ids": ["p3"]},
    ]) + "\n")
    out = tmp_path / "report.json"
    assert main(["eval", "retrieval", "--dataset", str(data), "--modes", "bm25,dense,hybrid,hybrid-rrf", "--embedder",
                 str(tiny_embedder_dir), "--out", str(out), "--index-root", str(tmp_path / "indexes")]) == 0
    printed = capsys.readouterr().out
    assert "| mode | R@1 | R@2 | R@5 | R@10 | AllGold@5 | MRR | nDCG@10 | p50_ms | p95_ms |" in printed
    assert "| bm25 | 1.000 |" in printed
    report = json.loads(out.read_text())
    assert set(report["modes"]) == {"bm25", "dense", "hybrid", "hybrid-rrf"}
    assert "| hybrid-rrf |" in printed
    assert report["modes"]["bm25"]["metrics"]["R@1"] == 1.0
    assert report["modes"]["bm25"]["metrics"]["nDCG@10"] == 1.0

    ablation = tmp_path / "ablation.json"
    assert main(["eval", "retrieval", "--dataset", str(data), "--ablate", "multi_query,prf", "--embedder",
                 str(tiny_embedder_dir), "--out", str(ablation), "--index-root", str(tmp_path / "indexes")]) == 0
    printed = capsys.readouterr().out
    rows = json.loads(ablation.read_text())["datasets"]["set"]
    assert set(rows) == {"defaults", "none", "+multi_query", "+prf"}
    assert "| +multi_query |" in printed and "nDCG@10 | p50 ms | ran on" in printed


def test_parse_filters():
    assert parse_filters(["category=cs.*", "language=en"]) == {"category": {"prefix": "cs."}, "language": "en"}
    with pytest.raises(ValueError):
        parse_filters(["oops"])


def test_eval_retrieval_refuses_an_unknown_mode(tmp_path, capsys):
    from cragraph_lab.retrieval import retriever_modes
    from rag.retrieval.retriever import HybridRetriever

    with pytest.raises(ValueError, match="unknown mode 'hybrid-magic'"):
        retriever_modes(HybridRetriever(bundle=None), ["hybrid-magic"])


# ----------------------------------------------------------------------------------------- python -m cragraph_lab bench

BENCH_COMMANDS = ("ask-latency", "bm25-speed", "semantic-calibration", "training-data", "cosine-calibration")
ROOT = Path(__file__).resolve().parents[4]


def test_bench_help_lists_its_five_commands(capsys):
    from cragraph_lab.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--help"])
    assert exit_.value.code == 0
    printed = capsys.readouterr().out
    missing = [name for name in BENCH_COMMANDS if name not in printed]
    assert not missing, f"`python -m cragraph_lab bench --help` does not list {missing}:\n{printed}"
    assert main(["bench"]) == 2, "the bare group prints its help and fails"
    printed = capsys.readouterr().out
    assert printed.startswith("usage: python -m cragraph_lab bench") and all(name in printed for name in BENCH_COMMANDS)


def test_bench_commands_parse_the_options_of_the_old_entry_points():
    from cragraph_lab.cli import bench
    from cragraph_lab.cli.main import _parser

    parser = _parser()
    latency = parser.parse_args(["bench", "ask-latency", "--index", "ix", "--file", "q.txt", "--web"])
    assert (latency.index, latency.file, latency.web, latency.run) == ("ix", Path("q.txt"), True, bench._ask_latency)
    speed = parser.parse_args(["bench", "bm25-speed"])
    assert (speed.chunks, speed.queries, speed.okapi_queries, speed.seed, speed.out) == (100_000, 50, 20, 0, None)
    semantic = parser.parse_args(["bench", "semantic-calibration", "a.jsonl", "b.jsonl", "--embedder", "minilm"])
    assert (semantic.results, semantic.embedder) == ([Path("a.jsonl"), Path("b.jsonl")], "minilm")
    training = parser.parse_args(["bench", "training-data", "--out", "o"])
    assert (training.data_root, training.out, training.run) == (None, Path("o"), bench._training_data)
    cosine = parser.parse_args(["bench", "cosine-calibration", "d", "--top-k", "5"])
    assert (cosine.data_dir, cosine.embedder, cosine.top_k) == (Path("d"), "e5-small", 5)


def test_bench_bm25_speed_writes_its_json(tmp_path, capsys):
    from cragraph_lab.bm25_speed import DATA
    from cragraph_lab.cli.main import main

    if not DATA.exists():
        pytest.skip(f"`python -m cragraph_lab bench bm25-speed` reads every corpus under {DATA}, which is not present "
                    "(the benchmark data sits beside the repository in development)")
    out = tmp_path / "speed" / "bm25.json"
    assert main(["bench", "bm25-speed", "--chunks", "300", "--queries", "3", "--okapi-queries", "2",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| BM25Index.search (k=10) |" in printed and f"wrote {out}" in printed
    result = json.loads(out.read_text(encoding="utf-8"))
    assert {"chunks", "distinct_chunks", "chunks_reused", "corpora", "vocabulary", "tokenize_s", "build_s",
            "query_median_ms", "query_p90_ms_ours", "queries", "speedup", "same_top10_scores", "params",
            "machine"} <= set(result)
    assert result["chunks"] == 300 and result["queries"] == {"ours": 3, "rank_bm25": 2}
    assert result["same_top10_scores"] == "2/2"


def test_bench_bm25_speed_without_data_is_a_clear_error(tmp_path):
    from cragraph_lab.bm25_speed import run

    with pytest.raises(FileNotFoundError, match="benchmark data not found"):
        run(10, 1, 1, data=tmp_path / "nowhere")


def test_bench_training_data_prints_every_folder_it_writes(tmp_path, capsys):
    from cragraph_lab.cli.main import main
    from cragraph_lab.training_data import default_data_root

    if not default_data_root().exists():
        pytest.skip(f"`python -m cragraph_lab bench training-data` cuts the sets under {default_data_root()}, which is "
                    "not present")
    out = tmp_path / "evaluator-data"
    assert main(["bench", "training-data", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    assert str(out / "train" / "nq_open_oracle_litm") in printed
    held_out = [str(out / "xquad_heldout" / name) for name in ("en", "ru", "zh", "zh_hant", "zh_hant_questions")]
    assert held_out == printed[-9:-4]
    traditional = (out / "xquad_heldout" / "zh_hant" / "questions.jsonl").read_text(encoding="utf-8")
    assert "誰" in traditional and "谁" not in traditional
    unseen = ["nq_open_oracle_litm", "xquad_en", "xquad_ru", "xquad_zh"]
    assert [str(out / "reader_unseen" / name) for name in unseen] == printed[-4:]
    assert all((Path(folder) / "questions.jsonl").is_file() for folder in printed)


def _tiny_set(folder: Path) -> Path:
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in [
        {"id": "p1", "title": "river", "text": "the river flows through the city near the old harbour"},
        {"id": "p2", "title": "institute", "text": "a scientist founded an institute in the capital"},
        {"id": "p3", "title": "bridge", "text": "the bridge crosses the river"},
    ]) + "\n", encoding="utf-8")
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in [
        {"id": "q1", "question": "which river flows through the city", "answers": ["river"], "supporting_ids": ["p1"]},
        {"id": "q2", "question": "who founded an institute", "answers": ["scientist"], "supporting_ids": ["p2"]},
        {"id": "q3", "question": "what crosses the river", "answers": ["bridge"], "supporting_ids": ["p3"]},
    ]) + "\n", encoding="utf-8")
    return folder


def test_bench_cosine_calibration_prints_the_measured_points(tmp_path, tiny_embedder_dir, capsys):
    from cragraph_lab.cli.main import main

    data = _tiny_set(tmp_path / "set")
    assert main(["bench", "cosine-calibration", str(data), "--embedder", str(tiny_embedder_dir),
                 "--top-k", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["questions"], result["positives"], result["negatives"], result["top_k"]) == (3, 3, 6, 3)
    assert -1.0 <= result["cos_lo"] < result["cos_hi"] <= 1.0
    assert len(result["positive_pcts"]) == len(result["negative_pcts"]) == 5


def test_bench_semantic_calibration_prints_a_threshold_per_script(tmp_path, tiny_embedder_dir, capsys):
    from cragraph_lab.cli.main import main

    records = [{"id": f"q{i}", "mode": "plain", "abstained": False, "answer": f"the {word} [1]", "answers": [word]}
               for i, word in enumerate(("river", "bridge", "harbour", "institute", "capital", "city"))]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["bench", "semantic-calibration", str(results), "--embedder", str(tiny_embedder_dir)]) == 0
    calibration = json.loads(capsys.readouterr().out)
    assert set(calibration) == {"en"}
    assert calibration["en"]["positives"] == 6 and calibration["en"]["pairs"] > 6
    assert {"threshold", "balanced_accuracy", "tpr", "fpr"} <= set(calibration["en"])


def test_qa_suite_options_become_the_config_and_its_reproduce_command():
    from cragraph_lab.cli.main import _parser
    from cragraph_lab.cli.qa import config_from_args, run_eval_qa_suite
    from cragraph_lab.qa_suite import SUITE_SETS, suite_command

    args = _parser().parse_args(["eval", "qa-suite", "--sets", "a, b", "--limit", "50", "--fresh", "--no-plots",
                                 "--data-root", "data"])
    config = config_from_args(args)
    assert (list(config.sets), config.limit, config.fresh, config.plots, config.data_root) == \
        (["a", "b"], 50, True, False, Path("data"))
    assert args.run is run_eval_qa_suite
    assert suite_command(config) == "OMP_NUM_THREADS=1 python -m cragraph_lab eval qa-suite --sets a,b --limit 50"
    config.index_root = Path.home() / ".cache" / "cragraph" / "qa-suite-indexes"
    assert suite_command(config).endswith("--index-root ~/.cache/cragraph/qa-suite-indexes")  # no machine's home
    defaults = config_from_args(_parser().parse_args(["eval", "qa-suite", "--render-only", "--fresh"]))
    assert tuple(defaults.sets) == SUITE_SETS and not defaults.fresh, "--render-only never discards results"


# ---------------------------------------------------------------------------------------- argparse lives in cli


def _entry_point_code(path: Path) -> list[str]:
    """What in one module parses arguments or runs as a script: argparse imports and `__main__` checks."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "argparse" for a in node.names) or \
                isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            found.append(f"line {node.lineno}: imports argparse")
        elif isinstance(node, ast.Compare) and any(isinstance(part, ast.Constant) and part.value == "__main__"
                                                   for part in (node.left, *node.comparators)):
            found.append(f"line {node.lineno}: a `__name__ == \"__main__\"` block")
    return found


def test_only_cragraph_cli_parses_arguments():
    """cragraph/cli/ holds the project's only argparse; bench modules and evaluators are plain functions, run
    through `cragraph` sub-commands, with no `python -m` entry points."""
    offending = []
    for top in ("cragraph", "rag", "models", "evaluators", "graph", "nodes", "prompts", "stores"):
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative.parts[:2] == ("cragraph", "cli"):
                continue
            offending += [f"{relative.as_posix()} {what}" for what in _entry_point_code(path)]
    assert not offending, "argument parsing outside cragraph/cli/:\n" + "\n".join(offending)


def test_the_argparse_check_sees_function_level_imports_and_main_blocks(tmp_path):
    module = tmp_path / "tool.py"
    module.write_text("def main():\n    from argparse import ArgumentParser\n    return ArgumentParser\n\n\n"
                      "if __name__ == '__main__':\n    main()\n", encoding="utf-8")
    assert _entry_point_code(module) == ["line 2: imports argparse", 'line 6: a `__name__ == "__main__"` block']


def test_bench_decision_training_learns_that_a_wide_margin_is_right_and_refuses_runs_without_candidates(
        tmp_path, capsys):
    from cragraph_lab.cli.main import main
    from rag.answering.decision import load_decision
    from rag.answering.features import FEATURES

    run = tmp_path / "train_set"
    run.mkdir()
    rows = []
    for i in range(60):  # right answers stand far above the reader's no-answer score, wrong ones do not
        right = i % 2 == 0
        features = {name: 0.0 for name in FEATURES} | {"one_pass": 1.0, "margin": (0.9 if right else -0.2) + i / 600}
        rows.append({"mode": "crag-multihop", "id": f"q{i}", "answers": ["Gdansk"], "gold_ids": [],
                     "candidates": [{"answer": "Gdansk" if right else "Warsaw", "reading": "one_pass",
                                     "features": features}]})
    results = run / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "decision.json"
    assert main(["bench", "decision-training", str(results), "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == 60 and report["truth"] == 0.5  # every right one answered, every wrong one not
    model = load_decision(str(out))
    wide, narrow = ({name: 0.0 for name in FEATURES} | {"one_pass": 1.0, "margin": m} for m in (0.9, -0.2))
    assert model.probability(wide) > 0.5 > model.probability(narrow)
    results.write_text("".join(json.dumps({**r, "candidates": []}) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(SystemExit, match="no candidates of mode 'crag-multihop'"):
        main(["bench", "decision-training", str(results), "--out", str(out)])
