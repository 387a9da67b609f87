"""review_web and review_answer: optional human review points (Context.review), paused with interrupt().

before_web: after grading sent the question to the web, the run pauses with the question, the verdict and the
graded passages; the client resumes with Command(resume={"action": "approve"}) (search), "skip" (no web search:
the CRAG route without it) or "reject" (abstain). before_answer: after the answer is drafted, the run pauses with
the draft, its citations and evidence; "approve" keeps it, {"action": "edit", "answer": "..."} replaces its text,
"reject" abstains. A resume value that is not one of these pauses again with an `error` saying what is accepted
(LangGraph's validate-in-a-loop pattern), so a typo is answered, not turned into a failed run.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from rag.context import Context
from rag.state import StageTimer, State, abstained
from stores.text import language_of

WEB_ACTIONS = ("approve", "skip", "reject")
ANSWER_ACTIONS = ("approve", "edit", "reject")
SHOWN_PASSAGES = 5
SHOWN_CHARS = 400
MAX_EDIT_CHARS = 4000


def review_web(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask a person before the question leaves for the web (a paid API, the question sent outside)."""
    timer = StageTimer("review")
    payload = {
        "review": "before_web",
        "about_to": "search the web for this question",
        "question": state.get("question"),
        "verdict": state.get("verdict"),
        "passages": _shown_passages(state),
        "actions": {
            "approve": "search the web",
            "skip": "go on without the web",
            "reject": "abstain: answer that the sources are not enough",
        },
    }
    action, _ = _ask(payload, WEB_ACTIONS)
    if action == "approve":
        return {"trace": [timer.record("approve: web search")]}
    if action == "skip":
        return {"web_status": "skipped by review", "trace": [timer.record("skip: no web search")]}
    return {**_abstained(state), "web_status": "rejected by review",
            "trace": [timer.record("reject: abstain", note="rejected before the web search")]}


def review_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask a person before the answer is given: keep it, correct it, or withhold it."""
    timer = StageTimer("review")
    payload = {
        "review": "before_answer",
        "about_to": "give this answer",
        "question": state.get("question"),
        "answer": state.get("answer"),
        "citations": state.get("citations", []),
        "evidence": state.get("evidence", []),
        "abstained": state.get("abstained", False),
        "actions": {
            "approve": "give the answer as it is",
            "edit": 'give {"action": "edit", "answer": "..."} instead',
            "reject": "abstain: answer that the sources are not enough",
        },
    }
    action, value = _ask(payload, ANSWER_ACTIONS)
    if action == "approve":
        return {"trace": [timer.record("approve: answer")]}
    if action == "edit":
        edited = str(value["answer"]).strip()
        return {"answer": edited, "abstained": False, "confidence": None, "margin": None,
                "trace": [timer.record("edit: answer replaced", note=f"{state.get('answer')!r} -> {edited!r}")]}
    return {**_abstained(state), "trace": [timer.record("reject: abstain", note="the answer was rejected")]}


def parse_resume(value: Any, actions: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(action, None) for a valid resume value, else (None, why). A bare string is taken as the action."""
    if isinstance(value, str):
        value = {"action": value}
    if not isinstance(value, dict) or not isinstance(value.get("action"), str):
        return None, f"resume with {{'action': one of {', '.join(actions)}}}, not {str(value)[:80]!r}"
    action = value["action"].strip().lower()
    if action not in actions:
        return None, f"unknown action {value['action'][:40]!r}: this review accepts {', '.join(actions)}"
    if action == "edit":
        answer = value.get("answer")
        if not isinstance(answer, str) or not answer.strip():
            return None, "the edit action needs the new text: {'action': 'edit', 'answer': '...'}"
        if len(answer) > MAX_EDIT_CHARS:
            return None, f"the edited answer has {len(answer)} characters; at most {MAX_EDIT_CHARS}"
    return action, None


def _ask(payload: dict[str, Any], actions: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """Pause until a valid resume value comes; each invalid one pauses again with the reason in `error`."""
    while True:
        value = interrupt(payload)
        action, error = parse_resume(value, actions)
        if action is not None:
            return action, value if isinstance(value, dict) else {"action": action}
        payload = {**payload, "error": error}


def _shown_passages(state: State) -> list[dict[str, Any]]:
    passages = state.get("candidates") or []
    grades = state.get("grades") or []
    shown = []
    for i, passage in enumerate(passages[:SHOWN_PASSAGES]):
        text = str(passage.get("text", ""))
        shown.append({
            "id": passage.get("id"),
            "title": passage.get("title"),
            "text": text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "...",
            "grade": round(float(grades[i]), 4) if i < len(grades) else None,
        })
    return shown


def _abstained(state: State) -> dict[str, Any]:
    question = state.get("question") if isinstance(state.get("question"), str) else ""
    return {**abstained(state.get("language") or language_of(question or ""), question or ""), "highlights": []}
