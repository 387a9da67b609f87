"""The lab's commands (cragraph_lab/, not in the wheel): registered from a source checkout, and where the lab is
absent (an installed wheel) each still parses any arguments and says where it lives and how to get it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cragraph.cli import main as cli

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("argv", [["bench", "embed-speed", "--chunks", "3"], ["bench", "--help"],
                                  ["eval", "qa", "--dataset", "x", "--limit", "2"], ["eval", "retrieval"],
                                  ["train-evaluator"], ["web-standin", "--corpus", "c.jsonl"]])
def test_without_the_lab_its_commands_say_where_they_live(monkeypatch, capsys, argv):
    monkeypatch.setattr(cli, "lab_commands", lambda: None)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    command = " ".join(argv[:2] if argv[0] == "eval" else argv[:1])
    assert f"`cragraph {command}` is a lab tool" in err and "source checkout" in err and "make install" in err


def test_without_the_lab_the_product_commands_stay(monkeypatch, capsys):
    monkeypatch.setattr(cli, "lab_commands", lambda: None)
    with pytest.raises(SystemExit):
        cli.main(["eval", "folder", "--help"])
    assert "questions" in capsys.readouterr().out


def test_a_checkout_registers_the_lab_commands():
    parser = cli._parser()
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {"bench", "train-evaluator", "web-standin", "index", "ask", "eval"} <= set(commands.choices)


def test_the_cli_finds_the_lab_beside_the_package_it_runs_from(tmp_path):
    """`make install` is editable: the `cragraph` script's path holds neither the checkout nor the working
    folder, so the lab is found beside the `cragraph` package that runs."""
    code = ("import sys; sys.path.remove('') if '' in sys.path else None\n"
            f"sys.path.insert(0, {str(ROOT)!r}); import cragraph.cli.main as m; sys.path.pop(0)\n"
            "assert 'cragraph_lab' not in sys.modules\n"
            "print(m.lab_commands().__name__)")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "cragraph_lab.cli", done.stderr
