"""What ships (issue 44): the wheel `pip wheel .` builds holds the product (index, search, ask, serve, `eval folder`)
and none of the lab (cragraph_lab/: benchmark runners, peers, the Tavily stand-in, speed and scale benches,
training); installed into a fresh virtual environment it indexes a folder and answers a question, and the lab's
commands say where they live instead of failing on an import.

The wheel is built from a copy of the working tree (setuptools' build/ folder would otherwise sit in the checkout,
and a stale build/lib can carry modules that are gone) with the running interpreter's setuptools, no download.
The install goes into a venv of its own with `--no-deps`; the dependencies (torch, transformers, ...) are this
interpreter's, seen through a path file added after the install, so the venv's own `cragraph` comes first and
the checkout is not on the path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = {"cragraph", "rag", "models", "evaluators", "graph", "nodes", "prompts", "stores"}
# Modules of the lab by name: none may be in the wheel under any package.
LAB_MODULES = ("reader_training", "reader_reranker", "reader_examples", "evaluator_training", "evaluator_eval",
               "decision_training", "decision_replay", "training_data", "calibration_data", "cosine_calibration",
               "query_means", "peers", "web_standin", "bm25_speed", "embed_speed", "skeleton_speed", "scale",
               "scale_milvus", "ask_latency", "qa_suite", "ablation", "semantic_match", "unanswerable", "extra",
               "tables", "before_after", "rule_ablation",
               "regex_literals", "candidate_signals")
SKIP = shutil.ignore_patterns(".git", ".venv", ".cragraph", "runs", "build", "*.egg-info", "__pycache__",
                              ".pytest_cache", ".ruff_cache", ".mypy_cache", ".langgraph_api")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source") / "cragraph"
    shutil.copytree(ROOT, source, ignore=SKIP, symlinks=True)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(out)], check=True, capture_output=True, text=True, timeout=600)
    (built,) = out.glob("cragraph-*.whl")
    return built


def test_the_wheel_holds_the_product_and_no_lab_module(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    packages = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert packages == PRODUCT
    modules = {Path(name).stem for name in names if name.endswith(".py")}
    assert not modules & set(LAB_MODULES), sorted(modules & set(LAB_MODULES))
    assert not [name for name in names if "bench" in name.split("/")[:-1] or "lab" in name.split("/")[0]]
    # What a user runs is there: the CLI, `eval folder` and what it reads, the packaged weights.
    for needed in ("cragraph/cli/main.py", "cragraph/evaluation/folder_qa.py", "cragraph/evaluation/qa_metrics.py",
                   "rag/reader/weights/config.json", "evaluators/weights/MODEL_CARD.md"):
        assert needed in names, needed
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "cragraph = cragraph.cli.main:entry" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.integration
def test_the_installed_wheel_indexes_and_answers(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "-q", str(wheel)], check=True, capture_output=True, text=True, timeout=600)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # This interpreter's libraries, after the venv's own: only their paths (a .pth line), so the editable
    # install's finder in that folder (which maps `cragraph` to a checkout) is not run.
    (site / "zz-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cragraph = str(venv / "bin" / "cragraph")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([cragraph, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)

    where = subprocess.run([str(python), "-c", "import cragraph.cli.main as m; print(m.__file__)"], cwd=tmp_path,
                           env=env, check=True, capture_output=True, text=True).stdout.strip()
    assert where.startswith(str(site)), where

    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "radium.md").write_text("# Radium Institute\n\nThe Radium Institute in Warsaw was founded by Marie "
                                    "Curie in 1932. Its first director was Ludwik Wertenstein.\n", encoding="utf-8")
    (docs / "harbour.txt").write_text("The old harbour of Gdansk was rebuilt after the war.\n", encoding="utf-8")
    index = run("index", str(docs), "--index", str(tmp_path / "idx"), "--quiet")
    assert index.returncode == 0, index.stderr
    assert "2 documents" in index.stdout, index.stdout
    asked = run("ask", "Who founded the Radium Institute?", "--index", str(tmp_path / "idx"), "--no-web", "--json")
    assert asked.returncode == 0, asked.stderr
    assert "Curie" in asked.stdout, asked.stdout

    lab = run("bench", "embed-speed", "--chunks", "10")
    assert lab.returncode == 2 and "source checkout" in lab.stderr and "make install" in lab.stderr, lab.stderr
    assert "Traceback" not in lab.stderr


@pytest.mark.integration
@pytest.mark.parametrize("extra", ["server", "openai", "ollama", "anthropic"])
def test_each_extra_a_user_can_name_resolves_with_the_wheel_into_a_clean_environment(wheel: Path, tmp_path: Path,
                                                                                      extra: str) -> None:
    """`pip install "cragraph[openai]"` and its peers: pip resolves the wheel with the extra from the package index
    as into an empty environment (`--ignore-installed`, a dry run: nothing is installed) without a conflict, so the
    provider's package comes in a version that accepts the project's langchain-core."""
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                           "--report", str(report), f"{wheel}[{extra}]"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    installed = {i["metadata"]["name"].lower() for i in json.loads(report.read_text())["install"]}
    wanted = {"server": "langgraph-cli", "openai": "langchain-openai", "ollama": "langchain-ollama",
              "anthropic": "langchain-anthropic"}[extra]
    assert wanted in installed and "langchain-core" in installed
