"""`cragraph eval folder`: a questions file answered over a folder of the user's own documents
(cragraph/evaluation/folder_qa.py). The benchmark evaluations (`eval qa`, `eval retrieval`, ...) are lab tools
(cragraph_lab/cli/)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_eval_folder(targets: Any) -> argparse.ArgumentParser:
    """Add `folder` to the `eval` subparsers."""
    parser = targets.add_parser(
        "folder", help="answer a questions file over a folder of your own documents at the defaults: right / "
                       "wrong / abstained per question type and language (cragraph/evaluation/folder_qa.py)")
    parser.add_argument("corpus", type=Path, help="folder of documents (as for `cragraph index`)")
    parser.add_argument("questions", type=Path, help="JSON lines: id, question, answers, type, language")
    parser.add_argument("--out", type=Path, default=Path("runs/folder"), help="results folder (default: %(default)s)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE",
                        help="a Context field for every question (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run_eval_folder)
    return parser


def run_eval_folder(args: argparse.Namespace) -> int:
    from cragraph.cli.agent import set_values
    from cragraph.evaluation.folder_qa import markdown, run_folder_eval

    rows = run_folder_eval(args.corpus, args.questions, args.out, set_values(args.overrides),
                           progress=not args.quiet)
    print(markdown(rows))
    return 0
