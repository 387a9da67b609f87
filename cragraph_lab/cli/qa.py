"""`python -m cragraph_lab eval qa` (cragraph_lab/qa.py: one set) and `python -m cragraph_lab eval qa-suite`
(cragraph_lab/qa_suite.py: every set, then its results page under runs/qa generated). cragraph_lab/cli/__init__.py wires
them in with `add_eval_qa(targets)` and `add_eval_qa_suite(targets)` on the `eval` sub-command's subparsers. The suite's
options are parsed here into a cragraph_lab.qa_suite.SuiteConfig. Heavy imports happen only when a command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cragraph_lab.qa_suite import SuiteConfig


def add_eval_qa(targets: Any) -> argparse.ArgumentParser:
    """Add `qa` to the `eval` subparsers."""
    from cragraph_lab.qa import ALL_MODES

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
    parser.add_argument("--unanswerable", type=float, default=0.0, metavar="FRACTION",
                        help="share of the questions (0..1, seeded) asked of an index without their gold passages; "
                             "adds Truth / Halluc / Abstain, overall and split (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=13, help="seed choosing the unanswerable questions")
    parser.add_argument("--web-standin", action="store_true",
                        help="serve the corpus, removed gold passages included, from a Tavily-compatible stand-in "
                             "on 127.0.0.1 that the CRAG modes' web branch searches")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results in --out and start over")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run_eval_qa)
    return parser


def run_eval_qa(args: argparse.Namespace) -> int:
    from cragraph_lab.qa import run_qa_eval

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    run_qa_eval(args.dataset, modes, limit=args.limit, out=args.out, chat_models=args.chat_model,
                embedder=args.embedder, k=args.k, index_root=args.index_root, reuse_index=args.reuse_index,
                fresh=args.fresh, plots=not args.no_plots, semantic_threshold=args.semantic_threshold,
                progress=not args.quiet, unanswerable=args.unanswerable, seed=args.seed,
                web_standin=args.web_standin)
    return 0


def add_eval_qa_suite(targets: Any) -> argparse.ArgumentParser:
    """Add `qa-suite` to the `eval` subparsers."""
    parser = targets.add_parser(
        "qa-suite", help="the QA benchmark over hotpotqa, XQuAD en/ru/zh and NQ (resuming), SemMatch calibrated "
                         "on a disjoint slice; generates its results page under runs/qa")
    add_suite_arguments(parser)
    parser.set_defaults(run=run_eval_qa_suite)
    return parser


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    """The suite's options; their defaults are SuiteConfig's (the published run)."""
    from cragraph_lab.qa import ALL_MODES
    from cragraph_lab.qa_suite import SUITE_SETS, SuiteConfig

    defaults = SuiteConfig()
    parser.add_argument("--data-root", type=Path, default=None,
                        help="folder holding the sets (default: ../shared/data beside the repository)")
    parser.add_argument("--sets", default=",".join(SUITE_SETS), help="comma-separated (default: the five)")
    parser.add_argument("--limit", type=int, default=defaults.limit, help="reported questions per set "
                        "(default: %(default)s)")
    parser.add_argument("--calibration", type=int, default=defaults.calibration,
                        help="questions after the reported ones per set that calibrate SemMatch (default: "
                             "%(default)s)")
    parser.add_argument("--modes", default=",".join(ALL_MODES), help="comma-separated (default: all)")
    parser.add_argument("--out", type=Path, default=defaults.out, help="runs folder (default: %(default)s)")
    parser.add_argument("--docs", type=Path, default=defaults.docs, help="results page (default: %(default)s)")
    parser.add_argument("--notes", type=Path, default=defaults.notes,
                        help="hand-written 'why we lose' text (default: %(default)s)")
    parser.add_argument("--readme", type=Path, default=defaults.readme,
                        help="a page whose section between the qa-results markers is replaced (default: none)")
    parser.add_argument("--embedder", default=defaults.embedder)
    parser.add_argument("-k", type=int, default=defaults.k, help="passages plain RAG and the peers answer from")
    parser.add_argument("--index-root", type=Path, default=None,
                        help="where dataset indexes are kept (default: the user cache folder)")
    parser.add_argument("--render-only", action="store_true",
                        help="only regenerate the page and the README section from finished runs")
    parser.add_argument("--fresh", action="store_true",
                        help="discard earlier results and answer everything again (a resumed run reuses results "
                             "whose settings match, even when the graph's code changed since)")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def config_from_args(args: argparse.Namespace) -> SuiteConfig:
    """The SuiteConfig that the parsed `qa-suite` options describe."""
    from cragraph_lab.qa_suite import SuiteConfig

    config = SuiteConfig(
        sets=[s.strip() for s in args.sets.split(",") if s.strip()], limit=args.limit,
        calibration=args.calibration, modes=[m.strip() for m in args.modes.split(",") if m.strip()],
        out=args.out, docs=args.docs, notes=args.notes, readme=args.readme, embedder=args.embedder, k=args.k,
        index_root=args.index_root, plots=not args.no_plots, fresh=args.fresh and not args.render_only)
    if args.data_root is not None:
        config.data_root = args.data_root
    return config


def run_eval_qa_suite(args: argparse.Namespace) -> int:
    from cragraph_lab.qa_suite import run_suite

    config = config_from_args(args)
    docs = run_suite(config, render_only=args.render_only, progress=not args.quiet)
    print(f"wrote {docs}" + (f" and the results section of {config.readme}" if config.readme else ""))
    return 0
