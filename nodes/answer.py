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
from pydantic import BaseModel, Field

from graph.context import Context
from nodes.common import bundle_of, evaluator_of, language_of, settings_of, titled
from nodes.llm import ask_structured
from nodes.refine import strip_spans
from nodes.trace import StageTimer
from prompts.answer import answer_messages
from prompts.languages import abstention

_MARKER = re.compile(r"\[(\d{1,3})\]")
_SPACES = re.compile(r"\s+")


class AnswerReply(BaseModel):
    answerable: bool
    answer: str = ""
    citations: list[int] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


def answer(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("answer")
    settings = settings_of(runtime)
    language = state.get("language") or language_of(state["question"])
    context = state.get("selected", [])
    if not context:
        why = "no context survived grading and selection" + _web_reason(state)
        return _abstain(timer, language, why)
    sentences = scored_sentences(state["question"], context, settings)
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
    numbers = _renumber([s["n"] for s in top])
    text = " ".join(f"{' '.join(s['sentence'].split())} [{numbers[s['n']]}]" for s in top)
    update = _answered(text, context, numbers, _evidence(top, numbers), language)
    counts = {"context": len(context), "sentences": len(sentences), "citations": len(update["citations"])}
    return {**update, "trace": [timer.record("extractive answer", counts, [s["score"] for s in top], note)]}


def scored_sentences(question: str, context: list[dict[str, Any]], settings: Context) -> list[dict[str, Any]]:
    """Every strip of the context with its relevance score and the (1-based) context number n it is from."""
    sentences: list[dict[str, Any]] = []
    unscored: list[tuple[int, str, str]] = []
    for n, passage in enumerate(context, start=1):
        if passage.get("strips"):
            sentences += [
                {"n": n, "sentence": s["text"], "score": float(s["score"])} for s in passage["strips"]
            ]
        else:
            language = passage.get("language") or language_of(passage["text"])
            for start, end in strip_spans(
                passage["text"], language, settings.strip_min_chars, settings.strip_max_chars
            ):
                unscored.append((n, passage.get("title") or "", passage["text"][start:end]))
    if unscored:
        evaluator = evaluator_of(settings, bundle_of(settings))
        scores = evaluator.score(question, [titled(t, s) for _, t, s in unscored])
        sentences += [
            {"n": n, "sentence": s, "score": float(score)}
            for (n, _, s), score in zip(unscored, scores, strict=True)
        ]
    return sentences


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
    numbers = _renumber(cited)
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
        evidence = _evidence(best, numbers)
    update = _answered(text, context, numbers, evidence, language)
    counts = {"context": len(context), "citations": len(update["citations"])}
    return {**update, "decision": "LLM answer", "counts": counts}, note


def _evidence(sentences: list[dict[str, Any]], numbers: dict[int, int]) -> list[dict[str, Any]]:
    """Scored context sentences as evidence records under their citation numbers."""
    return [{"n": numbers[s["n"]], "sentence": s["sentence"], "score": round(s["score"], 4)} for s in sentences]


def _answered(text: str, context: list[dict[str, Any]], numbers: dict[int, int],
              evidence: list[dict[str, Any]], language: str) -> dict[str, Any]:
    return {"answer": text, "citations": _citations(context, numbers), "evidence": evidence,
            "abstained": False, "language": language}


def _renumber(context_numbers: list[int]) -> dict[int, int]:
    """Context number -> citation number, in order of first use, so citations read [1], [2], ..."""
    order = list(dict.fromkeys(context_numbers))
    return {n: i for i, n in enumerate(order, start=1)}


def _citations(context: list[dict[str, Any]], numbers: dict[int, int]) -> list[dict[str, Any]]:
    cited = sorted(numbers.items(), key=lambda item: item[1])
    return [
        {
            "n": citation,
            "id": context[n - 1]["id"],
            "title": context[n - 1].get("title") or "",
            "source": context[n - 1].get("source", "index"),
            "url": context[n - 1].get("url"),
            "doc_id": context[n - 1].get("doc_id"),
        }
        for n, citation in cited
    ]


def _normalized(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def _web_reason(state: dict[str, Any]) -> str:
    status = state.get("web_status")
    return f"; web: {status}" if status and status not in ("ok", "not run") else ""


def _abstain(timer: StageTimer, language: str, why: str) -> dict[str, Any]:
    return {**_abstained(language), "trace": [timer.record("abstain", {"citations": 0}, (), why)]}


def _abstained(language: str) -> dict[str, Any]:
    return {"answer": abstention(language), "citations": [], "evidence": [], "abstained": True, "language": language}
