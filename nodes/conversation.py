"""conversation and respond: LangGraph's chat convention around the CRAG pipeline.

conversation (the first node): the question is the last user message when a chat client sent `messages`, else
`question`; on a thread it is resolved against the earlier turns when it is a follow-up ("and where was he
born?" -> "Where was Pyotr Kapitsa born?"), by the chat model when `llm_followup` is on (validated, the rule on
failure) and by rag.retrieval.followup's rule otherwise, recorded in the trace. It also refuses a review
setting that cannot pause (no checkpointer) before any work is done.

respond (the last node): the answer as an AIMessage on the `messages` channel, so chat clients (Agent Chat UI,
Studio's chat) show it and `stream_mode="messages"` yields it. A plain {"question": ...} run without a chat on its
thread gets no messages: its output stays what it was (JSON-able dicts only).
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.runtime import Runtime

from models.chat import message_text
from models.structured import ask_structured
from nodes._runtime import settings_of
from prompts.followup import StandaloneQuestion, followup_messages
from rag.config import operator
from rag.context import Context
from rag.retrieval.followup import Resolution, resolve
from rag.state import RUN_START, StageTimer, State, Turn

MAX_GROWTH_CHARS = 200  # an LLM rewrite may add names, not paragraphs
KEPT_TURNS = 3  # turns a `{"question": ...}` thread keeps before its last one, for "what about X?"


def conversation(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The run's standalone question (see the module's doc); the thread's user turn on `messages`."""
    timer = StageTimer("conversation")
    settings = settings_of(runtime)
    if settings.review != "off":
        _require_checkpointer(settings.review)
    messages = list(state.get("messages") or [])
    update: dict[str, Any] = {"run_mark": uuid.uuid4().hex, "followup": {}}
    last = messages[-1] if messages else None
    if isinstance(last, HumanMessage) and last.id != state.get("asked_id"):
        asked: Any = message_text(last)  # a chat client's new user message
        update["asked_id"] = last.id
        history = messages[:-1]
    else:
        asked = state.get("question")
        history = messages
        if messages and isinstance(asked, str):  # a {"question": ...} run on a chat thread joins the chat
            message = HumanMessage(content=asked, id=str(uuid.uuid4()))
            update["messages"] = [message]
            update["asked_id"] = message.id
    update["question"] = asked
    if not isinstance(asked, str) or not asked.strip():
        return update  # understand refuses it with the field's message
    turns = _turns(history) or _last_turn(state)
    if not turns:
        return update
    resolution, note = _resolve(asked.strip(), turns, settings)
    if not resolution.rewritten:
        return update
    update["question"] = resolution.question
    update["followup"] = {"asked": asked.strip(), "standalone": resolution.question, "how": resolution.how}
    decision = f"follow-up ({'llm' if resolution.how.startswith('llm') else 'rule'})"
    note = "; ".join(filter(None, [f"{asked.strip()!r} -> {resolution.question!r} ({resolution.how})", note]))
    # This record opens the run's trace (new_run in understand sees the mark and leaves it first).
    update["trace"] = [{**timer.record(decision, {"turns": len(turns)}, note=note), RUN_START: update["run_mark"]}]
    if state.get("debug"):
        update["debug"] = {RUN_START: True}
    return update


def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The answer as the thread's next AIMessage (chat runs only), and the turn a later follow-up leans on."""
    answer = state.get("answer") or ""
    standalone = state.get("question") if isinstance(state.get("question"), str) else ""
    earlier = [[asked, said] for asked, said in _last_turn(state)][-KEPT_TURNS:]
    turn: Turn = {"question": standalone or "", "answer": answer, "abstained": bool(state.get("abstained")),
                  "earlier": earlier}
    update: dict[str, Any] = {"last_turn": turn}
    if state.get("messages"):
        update["messages"] = [answer_message(state)]
    return update


def answer_message(state: State) -> AIMessage:
    """The answer text with its [n] markers; its citations, evidence and the standalone question in
    additional_kwargs (where clients keep provider-specific fields of a message)."""
    return AIMessage(
        content=state.get("answer") or "",
        id=str(uuid.uuid4()),
        name="cragraph",
        additional_kwargs={
            "citations": list(state.get("citations") or []),
            "evidence": list(state.get("evidence") or []),
            "abstained": bool(state.get("abstained")),
            "verdict": state.get("verdict"),
            "question": state.get("question"),
            **({"followup": state["followup"]} if state.get("followup") else {}),
            **({"withheld": state["withheld"]} if state.get("withheld") else {}),
        },
    )


def _require_checkpointer(review: str) -> None:
    try:
        checkpointer = get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER)
    except RuntimeError:  # called outside a graph run
        return
    if checkpointer is None:
        raise ValueError(
            f"review={review!r} pauses the run with interrupt(), which needs a checkpointer to resume from: "
            "compile with one and pass a thread_id (build_graph().compile(checkpointer=InMemorySaver()), "
            "config={'configurable': {'thread_id': ...}}), or run on the server (cragraph serve / langgraph dev); "
            "or set review='off'"
        )


def _turns(history: list[AnyMessage]) -> list[tuple[str, str]]:
    """(question, answer) pairs of a chat: each user message with the AI reply after it. Our own replies carry
    the standalone question they answered, so a chain of follow-ups resolves against names, not pronouns."""
    turns: list[tuple[str, str]] = []
    asked: str | None = None
    for message in history:
        if isinstance(message, HumanMessage):
            asked = message_text(message)
        elif isinstance(message, AIMessage) and asked is not None:
            standalone = message.additional_kwargs.get("question")
            turns.append((standalone if isinstance(standalone, str) and standalone else asked, message_text(message)))
            asked = None
    return turns


def _last_turn(state: State) -> list[tuple[str, str]]:
    """The thread's turns kept with its last one (`{"question": ...}` runs have no messages), oldest first."""
    turn = state.get("last_turn")
    if not turn or not turn.get("question"):
        return []
    earlier = [(pair[0], pair[1]) for pair in turn.get("earlier") or [] if len(pair) == 2]
    return [*earlier, (turn["question"], "" if turn.get("abstained") else turn.get("answer", ""))]


def _resolve(question: str, turns: list[tuple[str, str]], settings: Context) -> tuple[Resolution, str | None]:
    previous_question, previous_answer = turns[-1]
    rule = resolve(question, previous_question, previous_answer, earlier=turns[:-1])
    if not settings.llm_followup:
        return rule, None
    spec = settings.model_for(operator().models.rewrite)
    parsed, error = ask_structured(spec, followup_messages(question, turns), StandaloneQuestion)
    why = error or _invalid(parsed.question if parsed else "", question)
    if why or parsed is None:
        return rule, f"LLM follow-up rewrite refused ({why}); the rule's"
    standalone = parsed.question.strip()
    if standalone == question:
        return Resolution(question), None
    return Resolution(standalone, f"llm ({spec})"), None


def _invalid(rewrite: str, question: str) -> str | None:
    """Why an LLM rewrite cannot stand for the question (None: it can)."""
    text = rewrite.strip()
    if not text:
        return "empty"
    if len(text) > len(question) + MAX_GROWTH_CHARS:
        return f"{len(text)} characters for a {len(question)}-character question"
    if "\n" in text:
        return "more than one line"
    return None

