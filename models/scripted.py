"""A chat model that replays scripted answers, for tests of anything that calls an LLM.

Shipped with the package (not hidden in tests/) so users can test their own graphs offline. It is a real
LangChain `BaseChatModel`, so `invoke`, `batch`, callbacks and `|` chains behave as with any provider.

Why not LangChain's `GenericFakeChatModel`: it takes a one-shot iterator (not reusable, not inspectable, and it
ends with a bare `StopIteration`), and it does not record what it was asked. Tests here need to assert on the
prompts a node sent, and a clear error when a node makes more calls than the script expects.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from models.chat import cut_at_stop, message_text


class ScriptedChatModel(BaseChatModel):
    """Answers call i with `responses[i]` and records every call's messages in `calls`.

    With `cycle=True` the script repeats from the start instead of raising when it runs out.
    Calls are numbered under a lock, so concurrent `batch` calls each get a distinct response (in arrival
    order; use `max_concurrency=1` when a test needs a fixed pairing).
    """

    responses: list[str]
    cycle: bool = False
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "cragraph-scripted"

    @property
    def prompts(self) -> list[str]:
        """Each call's message contents joined by blank lines: convenient for `in` assertions."""
        return ["\n\n".join(message_text(m) for m in call) for call in self.calls]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            index = len(self.calls)
            if not self.responses or (index >= len(self.responses) and not self.cycle):
                raise IndexError(
                    f"ScriptedChatModel ran out of responses: call {index + 1} but only "
                    f"{len(self.responses)} scripted"
                )
            self.calls.append(list(messages))
            text = self.responses[index % len(self.responses)]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=cut_at_stop(text, stop)))])

