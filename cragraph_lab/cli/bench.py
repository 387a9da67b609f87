"""`python -m cragraph_lab bench ...`: the measurements behind the README's numbers that are not `cragraph eval` runs.

    ask-latency --index DIR --file QUESTIONS                    per-stage latency of the agent (ask_latency.py)
    cold-ask --checkout A --checkout B --index I                 cold `cragraph ask` side by side (cold_ask.py)
    reader-runtimes                                             the reader's graph vs torch (reader_runtimes.py)
    word-pieces                                                 sentencepiece vs tokenizers (word_pieces.py)
    bm25-speed --chunks 100000 --out FILE                       BM25Index vs rank-bm25 (bm25_speed.py)
    semantic-calibration RESULTS.jsonl ...                      SemMatch thresholds (semantic_match.py)
    training-data                                               the evaluator's data folders (training_data.py)
    cosine-calibration DIR                                      cosine evaluator points (cosine_calibration.py)
    reader-training --out DIR                                   the short-answer reader (reader_training.py)
    reader-average BASE OTHER --weight W --out DIR              two readers mixed weight by weight (same)
    decision-data                                               the answer decision's training folders
    decision-training RESULTS.jsonl ...                         the answer decision (decision_training.py)
    decision-replay NEW_RUNS OLD_RUNS                            a run re-decided, paired (decision_replay.py)
    crosslingual --corpus DIR --questions DIR ...                retrieval across languages (crosslingual.py)
    query-means --out DIR                                       cross-lingual language means (query_means.py)
    embed-speed --chunks 300 --repeats 3                        chunks/s per embedding backend (embed_speed.py)
    skeleton-speed INDEX --share 0.25                           NER time, all vs skeleton (skeleton_speed.py)
    scale --sizes 10000,100000 --out FILE                       the bundle's scale curve (scale.py)

The modules named are cragraph_lab/'s; cragraph_lab/cli/__init__.py wires the group in with `register(commands)`.
Each handler parses, calls the plain bench function and prints; the bench modules load only when their command
runs, so the CLI starts fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    """Add `bench` and its sub-commands to the top-level subparsers."""
    group = commands.add_parser("bench", help="speed and calibration measurements (latency, BM25 speed, "
                                              "semantic-match and cosine calibration, evaluator data)")
    group.set_defaults(run=lambda _args: _print_help(group))
    benches = group.add_subparsers(title="what to measure")

    latency = benches.add_parser("ask-latency", help="per-stage latency of the agent over a questions file "
                                                     "(p50 / p95 per graph node, one warm process)")
    latency.add_argument("--index", required=True)
    latency.add_argument("--file", type=Path, required=True, help="questions, one per line (# comments)")
    latency.add_argument("--web", action="store_true", help="allow web search (off by default)")
    latency.set_defaults(run=_ask_latency)

    cold = benches.add_parser("cold-ask", help="cold `cragraph ask` wall time and peak memory in checkouts side "
                                               "by side (one process per run, alternating; medians per checkout)")
    cold.add_argument("--checkout", action="append", required=True, metavar="DIR",
                      help="a cragraph source tree to run `python -m cragraph ask` in (repeatable)")
    cold.add_argument("--index", type=Path, required=True, help="the index to ask over (e.g. .cragraph/sample)")
    cold.add_argument("--runs", type=int, default=5, help="runs per checkout after one warm-up (default: %(default)s)")
    cold.add_argument("--question", default="Who was the first director of the institute where Lev Landau headed the "
                                            "theoretical department?", help="the README's first question (default)")
    cold.add_argument("--out", type=Path, default=None, help="JSON report path")
    cold.set_defaults(run=_cold_ask)

    runtimes = benches.add_parser("reader-runtimes", help="the reader's exported graph on OpenVINO and ONNX Runtime "
                                                          "against the torch reader: answers, EM / F1, speed")
    runtimes.add_argument("--per-set", type=int, default=50, help="cases from each of the four training sets")
    runtimes.add_argument("--out", type=Path, default=None, help="JSON report path")
    runtimes.set_defaults(run=_reader_runtimes)

    words = benches.add_parser("word-pieces", help="e5-small's word pieces through sentencepiece against tokenizers "
                                                   "on the shared benchmark data: ids, offsets, speed")
    words.add_argument("--per-file", type=int, default=4000, help="texts from each data file (default: %(default)s)")
    words.add_argument("--out", type=Path, default=None, help="JSON report path")
    words.set_defaults(run=_word_pieces)

    bm25 = benches.add_parser(
        "bm25-speed", help="BM25 query speed at scale: BM25Index vs rank-bm25's BM25Okapi over the same tokens",
        description="BM25 query speed at scale: BM25Index against rank-bm25's BM25Okapi over the same tokens. "
                    "Builds ~300-500-character chunks from every corpus.jsonl under ../shared/data (reused under "
                    "new ids when there are fewer than --chunks), times real questions from the same sets and "
                    "checks that both give the same top-10 scores. Prints a Markdown table; writes JSON to --out.")
    bm25.add_argument("--chunks", type=int, default=100_000)
    bm25.add_argument("--queries", type=int, default=50, help="questions timed on BM25Index")
    bm25.add_argument("--okapi-queries", type=int, default=20, help="of those, timed on rank-bm25 (slow)")
    bm25.add_argument("--seed", type=int, default=0)
    bm25.add_argument("--out", type=Path, help="write the JSON result here")
    bm25.set_defaults(run=_bm25_speed)

    semantic = benches.add_parser(
        "semantic-calibration", help="calibrate the semantic-match threshold per answer script on QA result files",
        description="Calibrate the semantic-match threshold on QA result files.")
    semantic.add_argument("results", nargs="+", type=Path,
                          help="results.jsonl files of `python -m cragraph_lab eval qa` runs")
    semantic.add_argument("--embedder", default="e5-small")
    semantic.set_defaults(run=_semantic_calibration)

    training = benches.add_parser(
        "training-data", help="write the evaluator's training and held-out XQuAD folders, and the reader-unseen "
        "folders answer gates are chosen on",
        description="Write the evaluator's training and held-out XQuAD folders, and the reader-unseen folders "
        "(cragraph_lab/calibration_data.py)")
    training.add_argument("--data-root", type=Path, default=None,
                          help="folder holding the benchmark sets (default: ../shared/data beside the repository)")
    training.add_argument("--out", type=Path, default=None, help="default: <user cache>/evaluator-data")
    training.set_defaults(run=_training_data)

    cosine = benches.add_parser(
        "cosine-calibration", help="measure the cosine evaluator's calibration points (cos_lo, cos_hi) on a "
                                   "benchmark folder",
        description="Measure cosine calibration points on a benchmark folder")
    cosine.add_argument("data_dir", type=Path)
    cosine.add_argument("--embedder", default="e5-small")
    cosine.add_argument("--top-k", type=int, default=10)
    cosine.set_defaults(run=_cosine_calibration)

    reader = benches.add_parser(
        "reader-training", help="train the short-answer reader on the training sets (writes reader.npz + "
                                "config.json; copy them to rag/reader/weights or point reader_path at them)",
        description="Train the short-answer reader on training data only")
    _training_arguments(reader, "reader.npz and config.json")
    reader.add_argument("--rerank-only", action="store_true",
                        help="keep the span model in --out and only refit its candidate re-ranker")
    reader.set_defaults(run=_reader_training)

    average = benches.add_parser(
        "reader-average", help="mix two trained readers weight by weight (a model soup): the shipped one and one "
                               "retrained on new data; writes reader.npz + config.json with its re-ranker",
        description="(1 - weight) * BASE + weight * OTHER, with OTHER's recipe; validation EM per source and a "
                    "re-ranker fitted for the mixture")
    average.add_argument("base", type=Path, help="a reader's weights folder (e.g. rag/reader/weights)")
    average.add_argument("other", type=Path, help="a reader trained with the same recipe's layers")
    average.add_argument("--weight", type=float, default=0.5, help="the share of OTHER (0 .. 1)")
    average.add_argument("--out", type=Path, required=True, help="folder for reader.npz and config.json")
    average.add_argument("--threads", type=int, default=2)
    average.add_argument("--data-root", type=Path, default=None,
                         help="the shared data folder (default: ../shared/data)")
    average.set_defaults(run=_reader_average)

    decision_data = benches.add_parser(
        "decision-data", help="write the answer decision's XQuAD and NQ training folders (user cache)")
    decision_data.add_argument("--out", type=Path, help="folder (default: ~/.cache/cragraph/decision-data)")
    decision_data.set_defaults(run=_decision_data)

    decision = benches.add_parser(
        "decision-training",
        help="fit the answer decision (the probability that a candidate answer is right) from eval qa runs on "
             "training questions; measures its calibration out of fold",
        description="Reads the candidates recorded by `python -m cragraph_lab eval qa --modes crag-multihop "
                    "--unanswerable 0.5` "
                    "runs on training sets, prints the out-of-fold calibration (ECE) and Truth against the "
                    "replaced answer gates, and writes the weights fitted on every candidate.")
    decision.add_argument("results", nargs="+", type=Path,
                          help="results.jsonl files of `python -m cragraph_lab eval qa` runs")
    decision.add_argument("--out", type=Path, help="weights file (default: the packaged decision.json)")
    decision.add_argument("--plot", type=Path, help="write the reliability plot (PNG) here")
    decision.add_argument("--mode", default="crag-multihop", help="the mode whose candidates are read")
    decision.set_defaults(run=_decision_training)

    long_documents = benches.add_parser(
        "long-documents",
        help="the Graph RAG benchmark shape: a folder of long documents (corpus/ + questions.jsonl) asked in every "
             "retrieval mode, right per question type and mode (lists by three quarters of their items)")
    long_documents.add_argument("folder", type=Path, help="e.g. data/longdocs_heldout17")
    long_documents.add_argument("--out", type=Path, default=Path("runs/long-documents"), help="results folder")
    long_documents.add_argument("--modes", nargs="+", help="modes to run (default: all)")
    long_documents.add_argument("--quiet", action="store_true", help="no progress bars")
    long_documents.set_defaults(run=_long_documents)

    replay = benches.add_parser(
        "decision-replay",
        help="decide a run's recorded candidates again with the decision's weights and pair it with another run",
        description="For each dataset folder in NEW_RUNS that OLD_RUNS also has: EM, F1, Truth, Halluc and Abstain "
                    "of the old run as it answered and of the new run's candidates decided by the weights, with "
                    "the paired difference and its bootstrap interval (a markdown table).")
    replay.add_argument("new", type=Path, help="an `eval qa --out` folder whose records hold their candidates")
    replay.add_argument("old", type=Path, help="an `eval qa --out` folder of the same questions")
    replay.add_argument("--weights", default="", help="decision weights (default: the packaged decision.json)")
    replay.add_argument("--threshold", type=float, default=0.5, help="answer_threshold (default: %(default)s)")
    replay.set_defaults(run=_decision_replay)

    embed = benches.add_parser(
        "embed-speed",
        help="indexing speed of e5-small per embedding backend (torch, onnx, onnx-int8, openvino), side by side",
        description="Real passages of a dataset's corpus are embedded as index chunks by each backend in turn "
                    "within every repeat; prints median chunks/s, the ratio to torch and the cosine to its vectors.")
    embed.add_argument("--dataset", type=Path, default=None, help="folder with corpus.jsonl (default: "
                                                                  "../shared/data/hotpotqa_migres200)")
    embed.add_argument("--chunks", type=int, default=600, help="passages to embed (default: %(default)s)")
    embed.add_argument("--repeats", type=int, default=5, help="interleaved repeats (default: %(default)s)")
    embed.add_argument("--batch-size", type=int, default=32, help="(default: %(default)s)")
    embed.add_argument("--backends", default="torch,onnx,onnx-int8,openvino",
                       help="comma-separated, the first is the reference (default: %(default)s)")
    embed.add_argument("--threads", type=int, default=None,
                       help="intra-op threads for every backend, as `cragraph index --workers N` sets them")
    embed.add_argument("--out", type=Path, default=None, help="JSON report path")
    embed.set_defaults(run=_embed_speed)

    skeleton = benches.add_parser(
        "skeleton-speed", help="NER time over an index's chunks: all of them vs skeleton indexing, side by side")
    skeleton.add_argument("index", type=Path)
    skeleton.add_argument("--share", type=float, default=0.25,
                          help="central share that gets NER (default: %(default)s)")
    skeleton.add_argument("--repeats", type=int, default=3, help="(default: %(default)s)")
    skeleton.set_defaults(run=_skeleton_speed)

    scale = benches.add_parser(
        "scale", help="the index bundle at 10k / 100k / 1M chunks: build time, disk, memory, hybrid latency",
        description="Synthetic corpora of real sentences with random unit vectors, built with the bundle's own "
                    "stores and searched with HybridRetriever (cragraph_lab/scale.py says what is synthetic).")
    scale.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated chunk counts")
    scale.add_argument("--queries", type=int, default=200, help="questions timed per size (hotpotqa_migres200)")
    scale.add_argument("--seed", type=int, default=0)
    scale.add_argument("--out", type=Path, help="write the JSON report here (rewritten after every size)")
    scale.add_argument("--workdir", type=Path, help="build the bundles here (default: a temporary folder in /tmp)")
    scale.add_argument("--keep", action="store_true", help="keep the built bundles")
    scale.add_argument("--backend", choices=("bundle", "milvus"), default="bundle",
                       help="bundle (default) or milvus: the same corpus in a Milvus Lite file, searched through "
                            "MilvusIndex (cragraph_lab/scale_milvus.py; pure-Python Milvus Lite, so keep sizes small)")
    scale.add_argument("--in-process", action="store_true",
                       help="build and query in this process (faster start; RSS peaks then accumulate)")
    scale.add_argument("--quiet", action="store_true", help="no progress bars")
    scale.set_defaults(run=_scale)

    crosslingual = benches.add_parser(
        "crosslingual", help="eval retrieval with one language's questions over a parallel corpus in another "
                             "(e.g. XQuAD ru questions, en corpus)",
        description="Pair each --questions set with the parallel --corpus set (gold ids mapped by passage number), "
                    "run eval retrieval on each pair and print R@1 / R@5 / MRR per direction and mode.")
    crosslingual.add_argument("--corpus", type=Path, required=True, help="dataset folder whose corpus is indexed")
    crosslingual.add_argument("--questions", type=Path, nargs="+", required=True,
                              help="dataset folders whose questions are asked (the corpus folder itself: the "
                                   "same-language figure)")
    crosslingual.add_argument("--modes", default="bm25,dense,hybrid", help="as eval retrieval's (default: %(default)s)")
    crosslingual.add_argument("--embedder", default="e5-small")
    crosslingual.add_argument("--limit", type=int, default=None, help="first N questions only")
    crosslingual.add_argument("--out", type=Path, default=None, help="JSON report path (one per direction)")
    crosslingual.set_defaults(run=_crosslingual)

    means = benches.add_parser(
        "query-means", help="the mean question vector per language that cross-lingual search shifts by "
                            "(from XQuAD's parallel training-half questions)")
    means.add_argument("--out", type=Path, required=True, help="folder for <embedder>.npz and SOURCE.md")
    means.add_argument("--embedder", default="e5-small")
    means.add_argument("--data", type=Path, default=None, help="benchmark data root (default: ../shared/data)")
    means.set_defaults(run=_query_means)


def _query_means(args: argparse.Namespace) -> int:
    from cragraph_lab.query_means import write_query_means

    print(f"wrote {write_query_means(args.out, args.embedder, args.data)}")
    return 0


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _save(result: dict, out: Path | None) -> None:
    """A bench's report as JSON at `out` (--out), when one is given."""
    import json

    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _ask_latency(args: argparse.Namespace) -> int:
    from cragraph_lab.ask_latency import latency_report, measure_stage_latencies, read_questions

    result = measure_stage_latencies(args.index, read_questions(args.file), web=args.web)
    print(latency_report(result))
    return 0


def _cold_ask(args: argparse.Namespace) -> int:
    from cragraph_lab.cold_ask import markdown, measure, resolve

    result = measure(resolve(args.checkout), args.index.resolve(), args.runs, args.question)  # asked from each checkout
    print(markdown(result))
    _save(result, args.out)
    return 0


def _reader_runtimes(args: argparse.Namespace) -> int:
    from cragraph_lab.reader_runtimes import compare, markdown

    result = compare(args.per_set)
    print(markdown(result))
    _save(result, args.out)
    return 0


def _word_pieces(args: argparse.Namespace) -> int:
    from cragraph_lab.word_pieces import compare, markdown

    result = compare(args.per_file)
    print(markdown(result))
    _save(result, args.out)
    return 0


def _embed_speed(args: argparse.Namespace) -> int:
    import os

    from cragraph_lab.embed_speed import DEFAULT_DATASET, format_table, measure, read_passages

    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads must be at least 1, got {args.threads}")
    if args.chunks < 1:
        raise ValueError(f"--chunks must be at least 1, got {args.chunks}")
    if args.threads is not None:
        import torch

        os.environ["CRAGRAPH_EMBED_THREADS"] = str(args.threads)
        torch.set_num_threads(args.threads)
    dataset = args.dataset or DEFAULT_DATASET
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    result = measure(read_passages(dataset, args.chunks), backends, args.repeats, args.batch_size)
    result["dataset"] = str(dataset)
    print(format_table(result))
    _save(result, args.out)
    return 0


def _skeleton_speed(args: argparse.Namespace) -> int:
    from cragraph_lab.skeleton_speed import measure, summary

    if not 0.0 < args.share <= 1.0:
        raise ValueError(f"--share must be in (0, 1], got {args.share}")
    print(summary(measure(args.index, args.share, args.repeats)))
    return 0


def _scale(args: argparse.Namespace) -> int:
    from cragraph_lab.scale import markdown, run

    sizes = [int(size.replace("_", "")) for size in args.sizes.split(",") if size.strip()]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--sizes needs positive chunk counts, got {args.sizes!r}")

    def save(report: dict) -> None:
        _save(report, args.out)

    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
    if args.backend == "milvus":
        return _scale_milvus(args, sizes, save)
    report = run(sizes, args.queries, args.seed, args.workdir, progress=not args.quiet,
                 isolate=not args.in_process, keep=args.keep, on_result=save)
    print(markdown(report))
    return 0


def _scale_milvus(args: argparse.Namespace, sizes: list[int], save: Callable[[dict], None]) -> int:
    from cragraph_lab.scale_milvus import markdown, run

    report = run(sizes, args.queries, args.seed, args.workdir, progress=not args.quiet,
                 isolate=not args.in_process, keep=args.keep, on_result=save)
    print(markdown(report["results"]))
    return 0


def _bm25_speed(args: argparse.Namespace) -> int:
    from cragraph_lab.bm25_speed import run, write_result

    result = run(args.chunks, args.queries, args.okapi_queries, args.seed)
    if args.out:
        write_result(result, args.out)
        print(f"wrote {args.out}")
    return 0


def _semantic_calibration(args: argparse.Namespace) -> int:
    import json

    from cragraph_lab.semantic_match import calibrate_results

    print(json.dumps(calibrate_results(args.results, args.embedder), indent=2))
    return 0


def _training_data(args: argparse.Namespace) -> int:
    from cragraph_lab.calibration_data import write_reader_unseen
    from cragraph_lab.training_data import write_evaluator_data

    for folder in [*write_evaluator_data(args.data_root, args.out), *write_reader_unseen(args.data_root, args.out)]:
        print(folder)
    return 0


def _cosine_calibration(args: argparse.Namespace) -> int:
    import json

    from cragraph_lab.cosine_calibration import measure_on_dataset

    print(json.dumps(measure_on_dataset(args.data_dir, args.embedder, args.top_k), indent=2))
    return 0


def _training_arguments(parser: argparse.ArgumentParser, files: str) -> None:
    """The arguments every model-training bench takes."""
    parser.add_argument("--out", type=Path, required=True, help=f"folder for {files}")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (results depend on it)")
    parser.add_argument("--data-root", type=Path, default=None,
                        help="folder holding the benchmark sets (default: ../shared/data beside the repository)")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=JSON",
                        help="override training settings, e.g. epochs=1 (see default_config)")


def _overrides(items: list[str], defaults: dict) -> dict:
    import json

    overrides = {}
    for item in items:
        key, _, value = item.partition("=")
        if key not in defaults or not value:
            raise SystemExit(f"--set {item!r}: expected KEY=JSON with KEY one of {', '.join(defaults)}")
        try:
            overrides[key] = json.loads(value)
        except ValueError as error:
            raise SystemExit(f"--set {item!r}: the value is not JSON ({error})") from error
    return overrides


def _reader_training(args: argparse.Namespace) -> int:
    import json

    from cragraph_lab.reader_training import default_config, train_reader

    if args.rerank_only:
        from cragraph_lab.reader_reranker import fit_reranker

        print(json.dumps(fit_reranker(args.out, args.data_root)))
        return 0
    metrics = train_reader(args.out, args.threads, _overrides(args.set, default_config()), args.data_root)
    print(json.dumps(metrics.get("ALL", {})))
    return 0


def _reader_average(args: argparse.Namespace) -> int:
    import json

    from cragraph_lab.reader_training import average_readers

    try:
        metrics = average_readers(args.base, args.other, args.weight, args.out, args.threads, args.data_root)
    except ValueError as error:
        raise SystemExit(str(error)) from error
    print(json.dumps({"validation": metrics.get("ALL", {}), "reranker": metrics.get("reranker", {})}))
    return 0


def _decision_data(args: argparse.Namespace) -> int:
    from cragraph_lab.decision_training import write_decision_sets

    for folder in write_decision_sets(out_root=args.out):
        print(folder)
    return 0


def _decision_training(args: argparse.Namespace) -> int:
    import json

    from cragraph_lab.decision_training import train_decision
    from rag.answering.decision import DEFAULT_WEIGHTS

    try:
        report = train_decision(args.results, args.out or DEFAULT_WEIGHTS, args.plot, args.mode)
    except ValueError as error:
        raise SystemExit(str(error)) from error
    print(json.dumps(report, indent=1))
    return 0


def _long_documents(args: argparse.Namespace) -> int:
    from cragraph_lab.long_documents import MODES, markdown, run_long_documents

    try:
        report = run_long_documents(args.folder, args.out, args.modes or tuple(MODES), not args.quiet)
    except ValueError as error:
        raise SystemExit(str(error)) from error
    print(markdown(report))
    return 0


def _decision_replay(args: argparse.Namespace) -> int:
    from cragraph_lab.decision_replay import markdown, replay
    from rag.answering.decision import load_decision

    model = load_decision(args.weights)
    print("| set | metric | old | new | new - old [95%] |\n|---|---|---|---|---|")
    for folder in sorted(p for p in args.new.iterdir() if (p / "results.jsonl").is_file()):
        old = args.old / folder.name / "results.jsonl"
        if old.is_file():
            print(markdown(folder.name, replay(folder / "results.jsonl", old, model, args.threshold)))
    return 0


def _crosslingual(args: argparse.Namespace) -> int:
    from cragraph_lab.crosslingual import run_crosslingual_eval

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    run_crosslingual_eval(args.corpus, args.questions, modes, embedder=args.embedder, limit=args.limit,
                          out=args.out)
    return 0
