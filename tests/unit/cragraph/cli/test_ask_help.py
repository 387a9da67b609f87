"""`cragraph ask --help` states the defaults a run uses: each option's default is read from the Context field it
sets, the environment's CRAGRAPH_<FIELD> included, and `build_context` passes the options to those fields."""

from __future__ import annotations

import argparse
import re

import pytest

from cragraph.cli.agent import build_context
from cragraph.cli.main import main
from cragraph.cli.options import CONTEXT_OPTIONS
from rag.context import Context

FLAGS = {"web": "--web", "chat_model": "--chat-model", "llm_answer": "--llm-answer", "evaluator": "--evaluator"}


def ask_help(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main(["ask", "--help"])
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def shown_default(text: str, flag: str) -> str:
    after = text.split(f" {flag} ", 1)[1] if f" {flag} " in text else text.split(f" {flag},", 1)[1]
    found = re.search(r"\(default: ([^)]*)\)", after)
    assert found, f"no default in the help of {flag}"
    return found.group(1)


def test_help_defaults_are_the_context_defaults(capsys) -> None:
    text = ask_help(capsys)
    context = Context()
    for option, field in CONTEXT_OPTIONS.items():
        value = getattr(context, field)
        expected = ("on" if value else "off") if isinstance(value, bool) else str(value)
        assert shown_default(text, FLAGS[option]) == expected
    assert shown_default(text, "--evaluator") == Context().evaluator != "cosine"


def test_help_follows_the_environment(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CRAGRAPH_EVALUATOR", "cosine")
    assert shown_default(ask_help(capsys), "--evaluator") == "cosine"


def test_options_reach_their_fields(tmp_path) -> None:
    args = argparse.Namespace(index=str(tmp_path), backend=None, uri=None, web=False, chat_model="openai:gpt-4o-mini",
                              llm_answer=True, evaluator="cosine", set=[])
    context = build_context(args)
    assert (context.web_search, context.chat_model, context.llm_answer, context.evaluator) == (
        False, "openai:gpt-4o-mini", True, "cosine")
    unset = argparse.Namespace(index=str(tmp_path), backend=None, uri=None, web=None, chat_model=None,
                               llm_answer=None, evaluator=None, set=[])
    assert build_context(unset).evaluator == Context().evaluator
