"""`cragraph eval qa` (bench/qa.py: one set) and `cragraph eval qa-suite` (bench/qa_suite.py: every set, then
docs/qa_results.md and the README results section generated). cragraph/cli.py wires them in with
`add_eval_qa(targets)` and `add_eval_qa_suite(targets)` on the `eval` sub-command's subparsers. Heavy imports
happen only when a command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_eval_qa(targets: Any) -> argparse.ArgumentParser:
    """Add `qa` to the `eval` subparsers."""
    from cragraph.bench.qa import ALL_MODES

    parser = targets.add_parser(
        "qa", help="end-to-end QA: EM, F1, semantic match, answer-in-context, citations, latency per stage; "
                   "our modes and peers on the same questions")
    parser.add_argument("--dataset", required=True, help="folder with questions.jsonl and corpus.jsonl")
    parser.add_argument("--limit", type=int, default=200, help="first N questions (default: %(default)s)")
    parser.add_argument("--modes", default=",".join(ALL_MODES),
                        help="comma-separated, from: " + ", ".join(ALL_MODES) + " (default: all)")
    parser.add_argument("--chat-model", action="append", default=[], metavar="PROVIDER:MODEL",
                        help="also run plain / crag / crag-multihop with this chat model writing the answer "
                             "(repeatable)")
    parser.add_argument("--out", type=Path, default=Path("runs/qa"),
                        help="results folder; one sub-folder per dataset (default: %(default)s)")
    parser.add_argument("-k", type=int, default=5, help="passages plain RAG and the peers answer from")
    parser.add_argument("--embedder", default="e5-small")
    parser.add_argument("--index-root", type=Path, default=None,
                        help="where dataset indexes are kept (default: the user cache folder)")
    parser.add_argument("--reuse-index", action="store_true",
                        help="use the cached dataset index as it is, without adding missing corpus documents")
    parser.add_argument("--semantic-threshold", type=float, default=None,
                        help="one cosine threshold for the semantic-match judge in every language "
                             "(default: the thresholds calibrated per answer language)")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results in --out and start over")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run_eval_qa)
    return parser


def run_eval_qa(args: argparse.Namespace) -> int:
    from cragraph.bench.qa import run_qa_eval

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    run_qa_eval(args.dataset, modes, limit=args.limit, out=args.out, chat_models=args.chat_model,
                embedder=args.embedder, k=args.k, index_root=args.index_root, reuse_index=args.reuse_index,
                fresh=args.fresh, plots=not args.no_plots, semantic_threshold=args.semantic_threshold,
                progress=not args.quiet)
    return 0


def add_eval_qa_suite(targets: Any) -> argparse.ArgumentParser:
    """Add `qa-suite` to the `eval` subparsers."""
    from cragraph.bench.qa_suite import add_suite_arguments

    parser = targets.add_parser(
        "qa-suite", help="the QA benchmark over hotpotqa, XQuAD en/ru/zh and NQ (resuming), SemMatch calibrated "
                         "on a disjoint slice; generates docs/qa_results.md and the README results section")
    add_suite_arguments(parser)
    parser.set_defaults(run=run_eval_qa_suite)
    return parser


def run_eval_qa_suite(args: argparse.Namespace) -> int:
    from cragraph.bench.qa_suite import run_from_args

    return run_from_args(args)
