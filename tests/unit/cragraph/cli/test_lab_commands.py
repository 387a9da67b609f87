"""The lab's commands (cragraph_lab/, not in the wheel) run as `python -m cragraph_lab ...` from a source checkout;
the product's `cragraph` never loads the lab, and there each lab command still parses any arguments and says in
one line which command to run instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cragraph.cli import main as cli
from cragraph_lab.cli import main as lab

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("argv", [["bench", "embed-speed", "--chunks", "3"], ["bench", "--help"],
                                  ["eval", "qa", "--dataset", "x", "--limit", "2"], ["eval", "retrieval"],
                                  ["train-evaluator"], ["web-standin", "--corpus", "c.jsonl"]])
def test_the_product_names_the_lab_command_for_each_lab_command(capsys, argv):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    command = " ".join(argv[:2] if argv[0] == "eval" else argv[:1])
    assert f"`cragraph {command}` is a lab tool" in err and f"`python -m cragraph_lab {command} ...`" in err
    assert "source checkout" in err and "make install" in err and len(err.strip().splitlines()) == 1


def test_the_product_commands_stay(capsys):
    with pytest.raises(SystemExit):
        cli.main(["eval", "folder", "--help"])
    assert "questions" in capsys.readouterr().out


def test_the_lab_registers_its_commands_and_none_of_the_product():
    commands = next(a for a in lab._parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {"bench", "train-evaluator", "web-standin", "eval"} == set(commands.choices)
    targets = next(a for a in commands.choices["eval"]._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {"retrieval", "evaluator", "qa", "qa-suite"} == set(targets.choices)


def test_the_lab_refuses_a_mistyped_option_as_the_product_does(capsys):
    with pytest.raises(SystemExit) as stop:
        lab.main(["bench", "bm25-speed", "--chuncks", "3"])
    assert stop.value.code == 2 and "did you mean --chunks?" in capsys.readouterr().err


def test_python_m_cragraph_lab_runs_from_the_checkout_and_the_product_never_loads_it(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])}
    done = subprocess.run([sys.executable, "-m", "cragraph_lab", "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m cragraph_lab"), done.stderr
    assert all(name in done.stdout for name in ("bench", "train-evaluator", "web-standin", "eval")), done.stdout
    code = ("import sys\nfrom cragraph.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
            "    pass\nassert not [m for m in sys.modules if m.startswith('cragraph_lab')]\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "python -m cragraph_lab" in done.stdout, done.stderr
