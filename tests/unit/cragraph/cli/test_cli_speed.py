"""What a `cragraph` command loads (issue 16: every ask / search spent 10-16 s loading models): help and usage
errors import no torch, a BM25 search loads no embedder, the reader's int8 model is made from the fp32 one
instead of read from disk again, and `cragraph ask -` answers questions from stdin in one process, each as it
arrives, as JSON Lines, and stops cleanly on Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from cragraph.cli.main import main
from tests.fixtures.graph import build_tiny_index, use_keyword_evaluator

ROOT = Path(__file__).resolve().parents[4]
HEAVY = ("torch", "sentence_transformers", "transformers")

# Runs the CLI's main() in a fresh interpreter and reports which heavy modules it imported and whether any
# embedder was loaded; the exit code is main's (or argparse's SystemExit code).
PROBE = """
import json, sys
HEAVY = HEAVY_MODULES
from cragraph.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
from models import embedder
report = {"code": code, "heavy": sorted(m for m in HEAVY if m in sys.modules), "embedders": len(embedder._cache)}
print("PROBE " + json.dumps(report), file=sys.stderr)
""".replace("HEAVY_MODULES", repr(HEAVY))


def probe(*argv: str) -> tuple[dict, str, str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    lines = [line for line in done.stderr.splitlines() if line.startswith("PROBE ")]
    assert lines, done.stderr
    return json.loads(lines[-1][len("PROBE "):]), done.stdout, done.stderr


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return str(build_tiny_index(tmp_path_factory.mktemp("cli-speed"), tiny_embedder_dir))


@pytest.mark.parametrize("argv", [["--help"], ["ask", "--help"], ["search", "--help"], ["ask", "q", "--idx", "x"],
                                  []])
def test_help_and_usage_errors_import_no_torch(argv):
    report, out, err = probe(*argv)
    assert report["code"] in (0, 2) and "usage: cragraph" in out + err
    assert report["heavy"] == [] and report["embedders"] == 0, report


def test_bm25_search_loads_no_embedder_and_hybrid_does(index):
    report, out, _ = probe("search", "Caspian Sea", "--index", index, "--mode", "bm25", "-k", "2", "--json")
    assert report["code"] == 0 and json.loads(out)[0]["chunk"]["doc_id"] == "volga"
    assert report["heavy"] == [] and report["embedders"] == 0, report
    # the probe can see a load: a hybrid search needs the index's embedder, and loads it once
    report, out, _ = probe("search", "Caspian Sea", "--index", index, "-k", "2", "--json")
    assert report["code"] == 0 and "dense" in json.loads(out)[0]["scores"]
    assert "torch" in report["heavy"] and report["embedders"] == 1, report


def test_the_int8_embedder_is_made_from_the_loaded_fp32_one(tiny_embedder_dir):
    from models.embedder import load_embedder, open_embedder

    name = str(tiny_embedder_dir)
    fp32 = load_embedder(name)
    texts = ["the river flows through the city", "река течёт через город", "科学家 在 首都 创办 研究所"]
    before = fp32.embed_passages(texts)
    int8 = load_embedder(name, quantize=True)
    assert int8 is not fp32 and int8 is load_embedder(name, quantize=True)
    kinds = {type(m).__module__ for m in int8.model.modules()}
    assert any("quantized" in kind for kind in kinds), kinds
    # one read of the model: the tokenizer and the unquantized tensors (the embedding table) are fp32's own
    assert int8.model.tokenizer is fp32.model.tokenizer
    fp32_tensors = {id(t) for t in fp32.model.parameters()}
    assert any(id(t) in fp32_tensors for t in int8.model.parameters())
    # the same vectors as an int8 model loaded from disk, and the fp32 model unchanged by quantizing the copy
    np.testing.assert_array_equal(int8.embed_passages(texts), open_embedder(name, quantize=True).embed_passages(texts))
    np.testing.assert_array_equal(fp32.embed_passages(texts), before)


class _Pipe(io.StringIO):
    """stdin as a pipe gives it: lines on readline(); read() would be a mistake (it waits for EOF)."""

    def read(self, *args):  # noqa: ARG002
        raise AssertionError("questions from stdin must be read line by line, not all at once")


def test_questions_from_stdin_give_one_json_line_each(index, monkeypatch, capsys):
    use_keyword_evaluator(monkeypatch)
    questions = ["Which river flows into the Caspian Sea?", "Who discovered polonium?"]
    monkeypatch.setattr(sys, "stdin", _Pipe(f"{questions[0]}\n\n   \n{questions[1]}\n"))
    assert main(["ask", "-", "--index", index, "--no-web", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["question"] for line in lines] == questions, lines
    assert all("answer" in json.loads(line) for line in lines)
    # questions given as arguments come first; text output gets a heading per question
    monkeypatch.setattr(sys, "stdin", _Pipe(questions[1] + "\n"))
    assert main(["ask", questions[0], "-", "--index", index, "--no-web"]) == 0
    out = capsys.readouterr().out
    assert out.index(f"## {questions[0]}") < out.index(f"## {questions[1]}"), out
    monkeypatch.setattr(sys, "stdin", _Pipe(""))
    assert main(["ask", "-", "--index", index, "--no-web", "--json"]) == 0
    assert capsys.readouterr().out == ""


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_stdin_answers_each_question_as_it_arrives_and_stops_on_ctrl_c(index):
    # Ctrl-C must reach the child even when pytest runs as a background job whose SIGINT the shell ignores
    process = subprocess.Popen([sys.executable, "-m", "cragraph", "ask", "-", "--index", index, "--no-web", "--json"],
                               cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"}, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        for question in ("Which river flows into the Caspian Sea?", "Who discovered polonium?"):
            process.stdin.write(f"{question}\n\n")  # stdin stays open: the answer must come before EOF
            process.stdin.flush()
            try:
                line = lines.get(timeout=240)
            except queue.Empty:
                pytest.fail(f"no answer to {question!r} while stdin was open")
            assert line is not None, process.stderr.read()
            result = json.loads(line)
            assert result["question"] == question and "answer" in result
        process.send_signal(signal.SIGINT)  # Ctrl-C while it waits for the next question
        assert process.wait(timeout=60) == 130
        err = process.stderr.read()
        assert "Traceback" not in err and "interrupted" in err, err
        assert lines.get(timeout=10) is None, "nothing after the two answers"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
