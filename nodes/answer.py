"""answer: from the selected context only, with numbered citations [n] and the evidence sentences.

Two paths. Extractive (default): the best-scoring knowledge strips (scored against the question by the
evaluator during refinement) are the answer, each followed by its citation. LLM (`llm_answer`): the chat model
answers in strict JSON, which is validated (citations in range, evidence copied from the cited passages); an
invalid reply falls back to the extractive path and says so in the trace. Both abstain, in the question's
language, when there is no context or no sentence reaches `answer_min_score`.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from cragraph.context import Context
from cragraph.knowledge.evidence import citations, evidence_records, renumber, scored_sentences
from cragraph.knowledge.strips import StripSettings
from cragraph.models.structured import ask_structured
from cragraph.settings import section
from cragraph.state import StageTimer, State
from nodes._runtime import lazy_evaluator, settings_of
from prompts.answer import AnswerReply, answer_messages
from prompts.languages import abstention
from stores.text import language_of

_MARKER = re.compile(r"\[(\d{1,3})\]")
_SPACES = re.compile(r"\s+")


def answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("answer")
    settings = settings_of(runtime)
    language = state.get("language") or language_of(state["question"])
    context = state.get("selected", [])
    if not context:
        why = "no context survived grading and selection" + _web_reason(state)
        return _abstain(timer, language, why)
    evaluator = lazy_evaluator(settings)
    sentences = scored_sentences(state["question"], context, evaluator, section(StripSettings, settings, "strip_"))
    best = max((s["score"] for s in sentences), default=-1.0)
    if best < settings.answer_min_score:
        return _abstain(
            timer,
            language,
            f"best evidence score {best:.2f} < answer_min_score "
            f"{settings.answer_min_score}" + _web_reason(state),
        )
    note = None
    if settings.llm_answer:
        result, note = llm_answer(state["question"], language, context, sentences, settings)
        if result is not None:
            return {
                **result,
                "trace": [
                    timer.record(
                        result["decision"],
                        result.pop("counts"),
                        [e["score"] for e in result["evidence"]],
                        note,
                    )
                ],
            }
    top = sorted(sentences, key=lambda s: -s["score"])[: max(1, settings.answer_sentences)]
    top = [s for s in top if s["score"] >= settings.answer_min_score]
    numbers = renumber([s["n"] for s in top])
    text = " ".join(f"{' '.join(s['sentence'].split())} [{numbers[s['n']]}]" for s in top)
    update = _answered(text, context, numbers, evidence_records(top, numbers), language)
    counts = {"context": len(context), "sentences": len(sentences), "citations": len(update["citations"])}
    return {**update, "trace": [timer.record("extractive answer", counts, [s["score"] for s in top], note)]}


def llm_answer(
    question: str,
    language: str,
    context: list[dict[str, Any]],
    sentences: list[dict[str, Any]],
    settings: Context,
) -> tuple[dict[str, Any] | None, str]:
    """The validated LLM answer as a state update, or (None, why it was rejected)."""
    numbered = [(n, p.get("title") or "", p["text"]) for n, p in enumerate(context, start=1)]
    spec = settings.model_for(settings.answer_model)
    reply, error = ask_structured(
        spec,
        answer_messages(question, language, numbered),
        AnswerReply,
        max_new_tokens=settings.answer_max_new_tokens,
    )
    if reply is None:
        return None, f"{error}; extractive answer used"
    if not reply.answerable:
        why = f"the LLM ({spec}) found no answer in the context"
        return {
            **_abstained(language),
            "decision": "abstain",
            "counts": {"context": len(context)},
        }, why
    cited = list(dict.fromkeys([*reply.citations, *(int(m) for m in _MARKER.findall(reply.answer))]))
    if not reply.answer.strip() or not cited or any(not 1 <= n <= len(context) for n in cited):
        return (
            None,
            f"LLM answer has no valid citation (cited {cited} of {len(context)}); extractive answer used",
        )
    numbers = renumber(cited)
    text = _MARKER.sub(lambda m: f"[{numbers.get(int(m.group(1)), int(m.group(1)))}]", reply.answer.strip())
    evidence = []
    for claimed in reply.evidence:
        for n in cited:
            if _normalized(claimed) and _normalized(claimed) in _normalized(context[n - 1]["text"]):
                score = max(
                    (
                        s["score"]
                        for s in sentences
                        if s["n"] == n and _normalized(claimed) in _normalized(s["sentence"])
                    ),
                    default=0.0,
                )
                evidence.append({"n": numbers[n], "sentence": claimed.strip(), "score": round(score, 4)})
                break
    note = f"LLM answer ({spec})"
    if len(evidence) < len(reply.evidence):
        note += (
            f"; {len(reply.evidence) - len(evidence)} evidence sentences not found in the context replaced"
        )
    if not evidence:
        best = sorted((s for s in sentences if s["n"] in numbers), key=lambda s: -s["score"])[:2]
        evidence = evidence_records(best, numbers)
    update = _answered(text, context, numbers, evidence, language)
    counts = {"context": len(context), "citations": len(update["citations"])}
    return {**update, "decision": "LLM answer", "counts": counts}, note


def _answered(text: str, context: list[dict[str, Any]], numbers: dict[int, int],
              evidence: list[dict[str, Any]], language: str) -> dict[str, Any]:
    return {"answer": text, "citations": citations(context, numbers), "evidence": evidence,
            "abstained": False, "language": language}


def _normalized(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def _web_reason(state: State) -> str:
    status = state.get("web_status")
    return f"; web: {status}" if status and status not in ("ok", "not run") else ""


def _abstain(timer: StageTimer, language: str, why: str) -> dict[str, Any]:
    return {**_abstained(language), "trace": [timer.record("abstain", {"citations": 0}, (), why)]}


def _abstained(language: str) -> dict[str, Any]:
    return {"answer": abstention(language), "citations": [], "evidence": [], "abstained": True, "language": language}
