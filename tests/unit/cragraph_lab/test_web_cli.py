"""`python -m cragraph_lab web-standin`: the sub-command's arguments, and the server run in the foreground by a real
process (through cragraph_lab/cli/web.py's `register` on a parser of the test's own, and through `python -m
cragraph_lab`), searched with the real client and stopped with Ctrl-C (SIGINT) or, failing that, killed."""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cragraph_lab.cli.web import register, run_web_standin
from rag.retrieval.web import WebSearchClient

ROOT = Path(__file__).resolve().parents[3]
KEY = "cli-key"
RECORDS = [
    {"id": "tokyo", "title": "Tokyo", "text": "Tokyo has about 14 million people.", "url": "https://example.org/t"},
    {"id": "nile", "title": "Nile", "text": "The Nile flows north into the Mediterranean Sea."},
    {"id": "everest", "title": "Mount Everest", "text": "Everest is the highest mountain above sea level."},
    {"id": "sahara", "title": "Sahara", "text": "The Sahara is the largest hot desert in the world."},
    {"id": "berlin", "title": "Berlin", "text": "Berlin is the capital and largest city of Germany."},
]
# `register` on a parser of our own: what `python -m cragraph_lab web-standin` runs, as
# cragraph_lab/cli/__init__.py registers it.
OWN_PARSER = (
    "import argparse, sys\n"
    "from cragraph_lab.cli.web import register\n"
    "parser = argparse.ArgumentParser(prog='cragraph')\n"
    "register(parser.add_subparsers())\n"
    "args = parser.parse_args(sys.argv[1:])\n"
    "try:\n"
    "    sys.exit(args.run(args))\n"
    "except ValueError as error:\n"
    "    print(f'error: {error}', file=sys.stderr)\n"
    "    sys.exit(1)\n"
)


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n", encoding="utf-8")
    return path


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cragraph")
    register(parser.add_subparsers())
    return parser


def test_the_subcommand_parses_its_options(corpus):
    args = parser().parse_args(["web-standin", "--corpus", str(corpus), "--port", "8123", "--api-key", "k"])
    assert (args.corpus, args.port, args.host, args.api_key, args.run) == (corpus, 8123, "127.0.0.1", "k",
                                                                         run_web_standin)
    defaults = parser().parse_args(["web-standin", "--corpus", str(corpus)])
    assert (defaults.port, defaults.api_key) == (0, None)
    with pytest.raises(SystemExit):
        parser().parse_args(["web-standin"])  # --corpus is required


def test_a_non_loopback_host_or_missing_corpus_is_refused_before_serving(corpus, tmp_path):
    args = parser().parse_args(["web-standin", "--corpus", str(corpus), "--host", "0.0.0.0"])
    with pytest.raises(ValueError, match="loopback"):
        run_web_standin(args)
    missing = parser().parse_args(["web-standin", "--corpus", str(tmp_path / "nope.jsonl")])
    with pytest.raises(FileNotFoundError, match="no corpus file"):
        run_web_standin(missing)


def _lines(process: subprocess.Popen) -> queue.Queue:
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _serve_search_and_stop(command: list[str]) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    # Ctrl-C must reach the child even when pytest itself runs as a background job, whose SIGINT the shell
    # ignores (an ignored signal is inherited, and Python then keeps ignoring it)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=_sigint_default)
    try:
        lines = _lines(process)
        try:
            first = lines.get(timeout=90)
        except queue.Empty:
            pytest.fail("the stand-in printed nothing within 90 s")
        assert first is not None, f"the process ended: {process.wait(timeout=10)} {process.stderr.read()}"
        found = re.search(r"http://127\.0\.0\.1:\d+", first)
        assert found and "5 passages" in first, first
        url = found.group(0)
        results = WebSearchClient(api_key=KEY, base_url=url, timeout_s=10).search("Tokyo people", max_results=3)
        assert results[0].url == "https://example.org/t" and results[0].score == 1.0
        wrong = WebSearchClient(api_key="wrong", base_url=url, timeout_s=10)
        with pytest.raises(Exception, match="auth"):
            wrong.search("Tokyo")
        process.send_signal(signal.SIGINT)  # Ctrl-C
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_register_serves_in_the_foreground_until_ctrl_c(corpus):
    _serve_search_and_stop([sys.executable, "-c", OWN_PARSER, "web-standin", "--corpus", str(corpus),
                            "--port", "0", "--api-key", KEY])


def test_a_remote_host_makes_the_command_fail_with_a_clear_message(corpus):
    done = subprocess.run([sys.executable, "-c", OWN_PARSER, "web-standin", "--corpus", str(corpus),
                           "--host", "10.1.2.3"], cwd=ROOT, capture_output=True, text=True, timeout=90,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 1 and "loopback" in done.stderr and done.stdout == ""


def test_cragraph_web_standin_runs_as_a_command(corpus):
    _serve_search_and_stop([sys.executable, "-m", "cragraph_lab", "web-standin", "--corpus", str(corpus),
                            "--port", "0", "--api-key", KEY])
