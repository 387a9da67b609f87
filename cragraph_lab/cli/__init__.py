"""The lab's commands, run as `python -m cragraph_lab COMMAND ...` (cragraph_lab/cli/main.py):
`bench ...`, `train-evaluator`, `web-standin`, and `eval retrieval | evaluator | qa | qa-suite`.
Building the parsers imports nothing heavy: each module loads when its command runs."""

from __future__ import annotations

import argparse
from typing import Any

from cragraph_lab.cli.bench import register as register_bench
from cragraph_lab.cli.evaluator import add_eval_evaluator, add_train_evaluator
from cragraph_lab.cli.qa import add_eval_qa, add_eval_qa_suite
from cragraph_lab.cli.retrieval import add_eval_retrieval
from cragraph_lab.cli.web import register as register_web

COMMANDS = ("bench", "train-evaluator", "web-standin")
EVAL_TARGETS = ("retrieval", "evaluator", "qa", "qa-suite")


def register(commands: argparse._SubParsersAction, eval_targets: Any) -> None:
    """Add the lab's top-level commands to `commands` and its evaluations to the `eval` subparsers."""
    add_train_evaluator(commands)
    register_bench(commands)
    register_web(commands)
    add_eval_retrieval(eval_targets)
    add_eval_evaluator(eval_targets)
    add_eval_qa(eval_targets)
    add_eval_qa_suite(eval_targets)
