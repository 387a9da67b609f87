"""The lab's command line, `python -m cragraph_lab COMMAND ...` from a source checkout (after `make install`):
`bench ...`, `train-evaluator`, `web-standin`, and `eval retrieval | evaluator | qa | qa-suite`. The commands come
from the lab's registry (cragraph_lab/cli/__init__.py); arguments, mistakes and errors are handled as by the
product's `cragraph` command, whose runner this uses."""

from __future__ import annotations

import argparse

from cragraph.cli.main import run_command
from cragraph_lab.cli import register

PROG = "python -m cragraph_lab"


def main(argv: list[str] | None = None) -> int:
    return run_command(_parser(), argv)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(title="commands")
    evaluate = commands.add_parser("eval", help="benchmark sets: retrieval, evaluator, qa, qa-suite")
    register(commands, evaluate.add_subparsers(title="what to evaluate"))
    return parser
