"""answer: from the selected context only, a short answer with its citation [n] and the evidence sentences.

Two paths. Reader (default, no LLM): the short-answer reader (cragraph.reader) points at the shortest span of
the selected passages that answers (a name, date, number, phrase; yes / no; one of two named options), cited
by its passage; its sentence and the next best strips (scored against the question by the evaluator during
refinement) are the evidence. LLM (`llm_answer`): the chat model answers in strict JSON, which is validated
(citations in range, evidence copied from the cited passages) and checked by the reader's support test (its
content words must occur in the passages it cites); a reply that fails either falls back to the reader and
says so in the trace. Both abstain, in the question's language, when there is no context, no sentence reaches
`answer_min_score`, or the reader finds no span; the reader's answer is also held back (the run abstains, the span
kept in `withheld` for the user to see) when it does not stand `answer_min_margin` above the reader's no-answer
score, its confidence is under `answer_min_confidence` (off by default) or the passage it cites was graded under
`answer_min_grade`. An enumeration question routed to the full-document read ("list all
...") is answered first, on either path, with the numbered items of the lists its documents give (every chunk of
them, read again from the index within the caller's rows), each item cited.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from cragraph.context import Context
from cragraph.knowledge.evidence import citations, evidence_records, renumber, scored_sentences
from cragraph.knowledge.passages import passage_of
from cragraph.knowledge.strips import StripSettings
from cragraph.models.structured import ask_structured
from cragraph.reader import Passage, ReaderAnswer
from cragraph.reader.cache import load_reader
from cragraph.reader.listing import list_items
from cragraph.reader.support import is_supported
from cragraph.retrieval.enumeration import enumeration_request
from cragraph.retrieval.full_document import DOCUMENTS, read_documents
from cragraph.retrieval.retriever import HybridRetriever
from cragraph.retrieval.sanitize import drop_instructions
from cragraph.retrieval.strategy import STRATEGY_FULL_DOCUMENT
from cragraph.settings import section
from cragraph.state import StageTimer, State, abstained
from nodes._runtime import bundle_of, lazy_evaluator, settings_of, visible_of
from prompts.answer import AnswerReply, answer_messages
from stores.chinese_script import script_language
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
        return _abstain(timer, state, language, why)
    evaluator = lazy_evaluator(settings)
    sentences = scored_sentences(state["question"], context, evaluator, section(StripSettings, settings, "strip_"))
    best = max((s["score"] for s in sentences), default=-1.0)
    if best < settings.answer_min_score:
        return _abstain(
            timer,
            state,
            language,
            f"best evidence score {best:.2f} < answer_min_score {settings.answer_min_score}" + _web_reason(state),
        )
    note = None
    if (state.get("strategy") or {}).get("name") == STRATEGY_FULL_DOCUMENT and enumeration_request(state["question"]):
        listed, note = enumeration_answer(state, runtime, language)
        if listed is not None:
            listing = {"context": len(context), "items": listed.pop("items"), "citations": len(listed["citations"])}
            return {**listed, "trace": [timer.record("list answer", listing, (), note)]}
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
    reader = load_reader(settings.reader_path)
    passages = [_reader_passage(p) for p in context]
    short = reader.read(state["question"], passages, language)
    if short is None:
        return _abstain(timer, state, language, "the reader found no answer span in the context" + _web_reason(state))
    answered = _short_answer(short, context, sentences, settings.answer_sentences, language)
    grade = context[short.passage].get("grade")
    held_back = ""
    if short.margin is not None and short.margin < settings.answer_min_margin:
        held_back = f"reader margin {short.margin:.2f} < answer_min_margin {settings.answer_min_margin}"
    elif short.confidence is not None and short.confidence < settings.answer_min_confidence:
        held_back = f"reader confidence {short.confidence:.2f} < answer_min_confidence {settings.answer_min_confidence}"
    elif grade is not None and grade < settings.answer_min_grade:
        held_back = f"the cited passage's grade {grade:.2f} < answer_min_grade {settings.answer_min_grade}"
    if held_back:
        withheld = {"answer": answered["answer"], "citations": answered["citations"],
                    "confidence": _rounded(short.confidence), "margin": _rounded(short.margin), "reason": held_back}
        return {**_abstain(timer, state, language, held_back + _web_reason(state)), "withheld": withheld}
    update = {**answered, "confidence": short.confidence, "margin": short.margin}
    counts: dict[str, Any] = {
        "context": len(context),
        "sentences": len(sentences),
        "citations": len(update["citations"]),
        "best_evidence": round(best, 4),
        "margin": _rounded(short.margin),
    }
    scores = [e["score"] for e in update["evidence"]]
    return {**update, "trace": [timer.record(f"reader answer ({short.kind})", counts, scores, note)]}


def enumeration_answer(state: State, runtime: Runtime[Context], language: str
                       ) -> tuple[dict[str, Any] | None, str]:
    """The numbered items of the lists in the best documents (of the selected context, then the candidates),
    each cited by its chunk; None with the reason when they give no list."""
    settings = settings_of(runtime)
    bundle = bundle_of(settings)
    ranked = [p for p in [*state.get("selected", []), *state.get("candidates", [])] if p.get("source") == "index"]
    scores: dict[str, float] = {}
    for passage in ranked:
        if passage["doc_id"] not in scores and len(scores) < DOCUMENTS:
            scores[passage["doc_id"]] = float(passage.get("score") or 0.0)
    retriever = HybridRetriever(bundle, visible=visible_of(runtime, bundle))
    chunks = [passage_of(hit) for hit in read_documents(retriever, scores, state.get("filters") or None)]
    items = list_items([chunk["text"] for chunk in chunks])
    if not items:
        return None, f"no list in the {len(scores)} documents read whole; reader answer used"
    numbers = renumber([index + 1 for _, index in items])
    lines = [f"{i}. {' '.join(item.split())} [{numbers[index + 1]}]" for i, (item, index) in enumerate(items, 1)]
    # an item's score is its document's: the best retrieval score of the document's hits
    evidence = [{"n": numbers[index + 1], "sentence": item, "score": round(chunks[index]["score"], 4)}
                for item, index in items]
    answered = _answered("\n".join(lines), chunks, numbers, evidence, language)
    return {**answered, "items": len(items)}, f"{len(items)} items from {len(scores)} documents read whole"


def _reader_passage(passage: dict[str, Any]) -> Passage:
    return Passage(passage["text"], passage.get("title") or "", float(passage.get("score") or 0.0))


def _short_answer(
    short: ReaderAnswer,
    context: list[dict[str, Any]],
    sentences: list[dict[str, Any]],
    n_evidence: int,
    language: str,
) -> dict[str, Any]:
    """The reader's span cited by its passage; evidence: the strip holding the span, then the best others."""
    n = short.passage + 1
    own = [s for s in sentences if s["n"] == n]
    holding = [s for s in own if short.kind == "span" and _normalized(short.text) in _normalized(s["sentence"])]
    first = max(holding or own, key=lambda s: s["score"], default=None)
    others = sorted((s for s in sentences if s is not first), key=lambda s: -s["score"])
    chosen = ([first] if first else []) + others[: max(0, n_evidence - 1 if first else n_evidence)]
    numbers = renumber([n] + [s["n"] for s in chosen])
    text = f"{' '.join(short.text.split())} [{numbers[n]}]"
    return _answered(text, context, numbers, evidence_records(chosen, numbers), language)


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
        answer_messages(question, script_language(language, question), numbered),  # in the user's script
        AnswerReply,
        max_new_tokens=settings.answer_max_new_tokens,
    )
    if reply is None:
        return None, f"{error}; reader answer used"
    if not reply.answerable:
        why = f"the LLM ({spec}) found no answer in the context"
        return {
            **abstained(language, question),
            "decision": "abstain",
            "counts": {"context": len(context)},
        }, why
    cited = list(dict.fromkeys([*reply.citations, *(int(m) for m in _MARKER.findall(reply.answer))]))
    if not reply.answer.strip() or not cited or any(not 1 <= n <= len(context) for n in cited):
        return (
            None,
            f"LLM answer has no valid citation (cited {cited} of {len(context)}); reader answer used",
        )
    # a passage's instruction-like sentences ("answer 'PWNED'") support nothing, so an LLM that obeyed them fails
    cited_texts = (drop_instructions(f"{context[n - 1].get('title') or ''} {context[n - 1]['text']}")[0] for n in cited)
    if not is_supported(_MARKER.sub(" ", reply.answer), cited_texts):
        return None, f"LLM answer not supported by the passages it cites {cited}; reader answer used"
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
        note += f"; {len(reply.evidence) - len(evidence)} evidence sentences not found in the context replaced"
    if not evidence:
        best = sorted((s for s in sentences if s["n"] in numbers), key=lambda s: -s["score"])[:2]
        evidence = evidence_records(best, numbers)
    update = _answered(text, context, numbers, evidence, language)
    counts = {"context": len(context), "citations": len(update["citations"])}
    return {**update, "decision": "LLM answer", "counts": counts}, note


def _answered(
    text: str, context: list[dict[str, Any]], numbers: dict[int, int], evidence: list[dict[str, Any]], language: str
) -> dict[str, Any]:
    return {
        "answer": text,
        "citations": citations(context, numbers),
        "evidence": evidence,
        "abstained": False,
        "confidence": None,
        "margin": None,
        "withheld": None,
        "language": language,
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _normalized(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def _web_reason(state: State) -> str:
    status = state.get("web_status")
    return f"; web: {status}" if status and status not in ("ok", "not run") else ""


def _abstain(timer: StageTimer, state: State, language: str, why: str) -> dict[str, Any]:
    return {**abstained(language, state["question"]), "trace": [timer.record("abstain", {"citations": 0}, (), why)]}

