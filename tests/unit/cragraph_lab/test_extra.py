"""Benchmark-only libraries live in the `bench` extra: the product does not import them, and a benchmark started
without them says which install brings them in."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cragraph_lab.extra import bench_import

ROOT = Path(__file__).resolve().parents[3]
BENCH_ONLY = ("rank-bm25", "langchain-community", "langchain-classic")


def test_missing_bench_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rank_bm25", None)  # as if not installed: import raises ImportError
    with pytest.raises(ImportError, match=r"cragraph\[bench\]"):
        bench_import("rank_bm25")


def test_bench_libraries_are_an_extra_not_a_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = " ".join(project["dependencies"])
    bench = " ".join(project["optional-dependencies"]["bench"])
    for package in (*BENCH_ONLY, "beautifulsoup4"):
        assert package not in names
    for package in BENCH_ONLY:
        assert package in bench
    assert "cragraph[bench]" in project["optional-dependencies"]["dev"]  # `make install` keeps the tests' peers


def test_asking_imports_no_bench_library() -> None:
    """Building the agent and the CLI imports none of the bench extra's libraries."""
    code = ("import sys, cragraph.cli.main, graph.builder\n"
            "print(sorted(m for m in ('rank_bm25', 'langchain_community', 'langchain_classic', 'bs4', 'matplotlib')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
