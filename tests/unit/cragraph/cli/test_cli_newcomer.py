"""What a newcomer meets first on the command line (issue 16): JSON Lines from `ask --json`, --set mistakes that
name the field, a mistyped option that shows the command's own usage, help texts and examples, a taken port."""

from __future__ import annotations

import argparse
import json
import socket

import pytest

from cragraph.cli.main import _parser, main
from tests.fixtures.graph import build_tiny_index, use_keyword_evaluator


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return str(build_tiny_index(tmp_path_factory.mktemp("cli-index"), tiny_embedder_dir))


def test_ask_json_prints_one_object_per_question(index, monkeypatch, capsys):
    use_keyword_evaluator(monkeypatch)
    questions = ["Which river flows into the Caspian Sea?", "Who discovered polonium?"]
    assert main(["ask", *questions, "--index", index, "--no-web", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and not any(line.startswith("#") for line in lines), lines
    results = [json.loads(line) for line in lines]
    assert [r["question"] for r in results] == questions and all("answer" in r and "trace" in r for r in results)


def test_set_mistakes_name_the_field(index, capsys):
    assert main(["ask", "q", "--index", index, "--set", "multihopp=never"]) == 1
    assert "unknown Context fields: 'multihopp' (did you mean 'multihop'?)" in capsys.readouterr().err
    assert main(["ask", "q", "--index", index, "--set", "answer_threshold=high"]) == 1
    assert "bad --set 'answer_threshold=high': answer_threshold expects a number" in capsys.readouterr().err
    assert main(["ask", "q", "--index", index, "--set", "highlight=perhaps"]) == 1
    assert "highlight expects true or false" in capsys.readouterr().err
    assert main(["ask", "q", "--index", index, "--set", "rerank_k=8"]) == 1
    assert ("rerank_k is an operator setting now: set it in cragraph.toml [rerank] k or CRAGRAPH_RERANK__K"
            in capsys.readouterr().err)
    assert main(["ask", "q", "--index", index, "--set", "retrieval_rrf_k=10"]) == 1
    assert "retrieval_rrf_k was removed: rrf fusion uses k = 60" in capsys.readouterr().err


def test_a_mistyped_option_shows_the_commands_usage(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["ask", "q", "--idx", "somewhere"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "usage: cragraph ask" in err
    assert "cragraph ask: error: unrecognized arguments: --idx (did you mean --index?) somewhere" in err


def test_options_have_help_and_the_top_level_has_examples():
    parser = _parser()
    assert "examples:" in parser.format_help() and 'cragraph ask "q1" "q2" --json' in parser.format_help()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for command, options in (("search", {"--index", "--mode", "-k"}), ("serve", {"--port"})):
        helped = {o for a in commands[command]._actions if a.help for o in a.option_strings}
        assert options <= helped, (command, options - helped)


def test_serve_refuses_a_taken_port_and_names_a_free_one(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 cannot be used" in err and "pick another, e.g. --port " in err
    assert "LangGraph dev server on" not in err  # no URL printed for a server that would not be there


def test_an_answer_held_back_by_the_threshold_is_still_shown_with_how_to_see_it(index, monkeypatch, capsys):
    use_keyword_evaluator(monkeypatch)
    question = "Which river flows into the Caspian Sea?"
    assert main(["ask", question, "--index", index, "--no-web", "--json", "--set", "answer_threshold=1"]) == 0
    result = json.loads(capsys.readouterr().out)
    held = result["withheld"]
    assert result["abstained"] and result["citations"] == [] and 0 < held["confidence"] < 1
    assert main(["ask", question, "--index", index, "--no-web", "--set", "answer_threshold=1"]) == 0
    printed = capsys.readouterr().out
    shown = f"Not sure enough (probability {held['confidence']:.2f} < answer_threshold 1.0): {held['answer']}"
    assert shown in printed and "`--set answer_threshold=" in printed
    assert printed.index("Citations:") > printed.index("Not sure enough")
    assert f"[1] {held['citations'][0]['title']}" in printed
