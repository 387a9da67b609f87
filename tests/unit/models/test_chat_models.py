"""Chat model loading by spec, and the scripted model tests elsewhere rely on."""

from __future__ import annotations

import importlib.machinery
import re
import sys
import types

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from models.chat import (
    EmbeddedChatModel,
    clear_chat_model_cache,
    cut_at_stop,
    load_chat_model,
    message_text,
    smollm2_gguf_path,
)
from models.scripted import ScriptedChatModel


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_chat_model_cache()
    yield
    clear_chat_model_cache()


def test_scripted_model_replays_in_order_and_records_prompts():
    model = ScriptedChatModel(responses=["first", "second"])
    assert model.invoke("hello").content == "first"
    reply = model.invoke([SystemMessage(content="be brief"), HumanMessage(content="what now?")])
    assert isinstance(reply, AIMessage) and reply.content == "second"
    assert len(model.calls) == 2
    assert model.prompts[0] == "hello"
    assert "be brief" in model.prompts[1] and "what now?" in model.prompts[1]


def test_scripted_model_raises_when_script_runs_out_and_cycles_on_request():
    model = ScriptedChatModel(responses=["only"])
    model.invoke("a")
    with pytest.raises(IndexError, match="ran out of responses"):
        model.invoke("b")
    cycling = ScriptedChatModel(responses=["x", "y"], cycle=True)
    assert [cycling.invoke(str(i)).content for i in range(5)] == ["x", "y", "x", "y", "x"]


def test_scripted_model_in_batch_keeps_order_with_one_worker():
    model = ScriptedChatModel(responses=["r0", "r1", "r2"])
    replies = model.batch(["p0", "p1", "p2"], config={"max_concurrency": 1})
    assert [r.content for r in replies] == ["r0", "r1", "r2"]
    assert model.prompts == ["p0", "p1", "p2"]


def test_stop_sequences_cut_the_reply():
    model = ScriptedChatModel(responses=["answer: Paris\nQuestion: next"])
    assert model.invoke("q", stop=["\nQuestion:"]).content == "answer: Paris"
    assert cut_at_stop("abc END def STOP", ["STOP", "END"]) == "abc "
    assert cut_at_stop("no stops here", None) == "no stops here"


def test_message_text_reads_content_blocks():
    message = HumanMessage(content=[{"type": "text", "text": "part one, "}, {"type": "text", "text": "two"}])
    assert message_text(message) == "part one, two"


def test_embedded_aliases_share_one_lazy_instance():
    model = load_chat_model("embedded")
    assert isinstance(model, EmbeddedChatModel)
    assert load_chat_model(" SmolLM2 ") is model
    assert load_chat_model() is model
    assert model.max_new_tokens > 0


def test_packaged_gguf_is_found():
    path = smollm2_gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


@pytest.mark.parametrize("spec", ["", "gpt-4o", "openai:", ":gpt-4o"])
def test_bad_specs_are_rejected_with_the_accepted_forms(spec):
    with pytest.raises(ValueError, match="provider:model"):
        load_chat_model(spec)


def test_missing_provider_package_names_the_extra_and_the_pip_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # makes the import fail
    with pytest.raises(ImportError, match=re.escape("pip install 'cragraph[openai]' (langchain-openai)")):
        load_chat_model("openai:gpt-4o-mini")


def test_provider_spec_builds_the_provider_class_with_the_model_name(monkeypatch):
    class ChatOllama(ScriptedChatModel):
        model: str

    module = types.ModuleType("langchain_ollama")
    module.__spec__ = importlib.machinery.ModuleSpec("langchain_ollama", loader=None)
    module.ChatOllama = lambda model: ChatOllama(model=model, responses=["pong"])
    monkeypatch.setitem(sys.modules, "langchain_ollama", module)

    chat = load_chat_model("ollama:qwen2.5:7b")
    assert isinstance(chat, ChatOllama)
    assert chat.model == "qwen2.5:7b"  # everything after the first colon is the model name
    assert chat.invoke("ping").content == "pong"
    assert load_chat_model("ollama:qwen2.5:7b") is chat
