"""Command-line pieces for the relevance evaluator: `python -m cragraph_lab eval evaluator` and `python -m
cragraph_lab train-evaluator`.

cragraph/cli/main.py wires them in: `add_eval_evaluator(targets)` on the `eval` sub-command's subparsers and
`add_train_evaluator(commands)` on the top-level subparsers. Building the parsers imports nothing heavy (the
CLI starts fast); the work modules load when a command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="folder with questions.jsonl and corpus.jsonl")
    parser.add_argument("--evaluator", default="embedded",
                        help="evaluator spec under test (default: %(default)s); cosine and bm25 always run beside it")
    parser.add_argument("--embedder", default="e5-small", help="embedder of the dataset's index")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--precision", type=float, default=None,
                        help="share of right decisions required above upper / below lower (default: 0.9)")
    parser.add_argument("--store-thresholds", type=Path, default=None, metavar="INDEX_DIR",
                        help="write the suggested thresholds into this index folder (evaluator_thresholds.json)")
    parser.add_argument("--out", type=Path, default=None, help="JSON report path")
    parser.add_argument("--index-root", type=Path, default=None,
                        help="where dataset indexes are kept (default: the user cache folder)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-root", type=Path, default=None,
                        help="folder holding the benchmark sets (default: ../shared/data beside the repository)")
    parser.add_argument("--out", type=Path, default=None,
                        help="weights file (default: evaluators/weights/embedded-e5-small-v1.npz, the shipped one; "
                             "with --crosslingual, embedded-e5-small-crosslingual-v1.npz)")
    parser.add_argument("--crosslingual", action="store_true",
                        help="train the head for question / passage pairs in different scripts instead, on XQuAD's "
                             "training half with questions of one language over the passages of another")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: 13)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs per head (default: 60)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def add_eval_evaluator(targets: Any) -> argparse.ArgumentParser:
    """Add `evaluator` to the `eval` subparsers: ROC-AUC vs baselines, CRAG decisions, suggested thresholds."""
    parser = targets.add_parser(
        "evaluator", help="ROC-AUC of the relevance evaluator vs cosine and BM25, CRAG decision accuracy and "
                          "suggested (upper, lower) thresholds")
    add_eval_arguments(parser)
    parser.set_defaults(run=_eval_evaluator)
    return parser


def add_train_evaluator(commands: Any) -> argparse.ArgumentParser:
    """Add `train-evaluator`: train the embedded evaluator's head (fixed seed, training data only)."""
    parser = commands.add_parser("train-evaluator", help="train the embedded relevance evaluator's head")
    add_train_arguments(parser)
    parser.set_defaults(run=_train_evaluator)
    return parser


def _eval_evaluator(args: argparse.Namespace) -> int:
    from cragraph_lab.evaluator_eval import DEFAULT_PRECISION, run_evaluator_eval

    precision = DEFAULT_PRECISION if args.precision is None else args.precision
    run_evaluator_eval(args.dataset, evaluator=args.evaluator, embedder=args.embedder, limit=args.limit,
                       index_root=args.index_root, precision=precision, store_in=args.store_thresholds,
                       out=args.out, progress=not args.quiet)
    return 0


def _train_evaluator(args: argparse.Namespace) -> int:
    import json

    from cragraph_lab.evaluator_training import SEED, run_training
    from cragraph_lab.training_data import default_data_root
    from evaluators.embedded import CROSSLINGUAL_WEIGHTS, DEFAULT_WEIGHTS

    out = args.out or (CROSSLINGUAL_WEIGHTS if args.crosslingual else DEFAULT_WEIGHTS)
    report = run_training(args.data_root or default_data_root(), out, seed=SEED if args.seed is None else args.seed,
                          epochs=args.epochs or 60, progress=not args.quiet, crosslingual=args.crosslingual)
    print(json.dumps(report, indent=2))
    print(f"wrote {out}")
    return 0
