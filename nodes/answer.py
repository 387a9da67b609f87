"""answer: from the selected context (and a planned question's hops) only, a short answer with its citations
and the evidence sentences, or an abstention.

Three steps. Gather: each reading (rag.answering.readings) turns what earlier stages left in state into
candidates: the whole question read in one pass over the selected passages, a planned question read along its
hops (its last sub-question, slot filled by each of the previous hop's answers, over that hop's passages), a
claim about one subject by the reader's pointer on its subject's page (rag.answering.claims), a claim about two
subjects or an "A or B" question by the rule readings (rag.answering.rules). Decide: one
calibrated model (rag.answering.decision) gives each candidate its probability of being right from the
signals the stages computed; the best one, a rule's included, is answered when that probability reaches
`answer_threshold`, else the run abstains and keeps it in `withheld` (naming any entity no passage mentions).
Format: cited by its passage (a chain by every hop's), with its evidence sentences. The trace shows every
candidate with its reading, probability and hop chain. With `llm_answer` the chat model answers in strict JSON,
validated (citations in range, evidence copied from the cited passages) and checked by the reader's support
test; a reply that fails either falls back to the readings and says so in the trace. An enumeration question
routed to the full-document read ("list all ...") is answered first with the numbered items of the lists its
documents give, each cited.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import IndexUnavailable, bundle_of, lazy_evaluator, settings_of, visible_of
from prompts.answer import AnswerReply, answer_messages
from rag.answering import Candidate, load_decision
from rag.answering.candidates import sentences_holding
from rag.answering.claims import names_subject
from rag.answering.decision import answers, choose
from rag.answering.features import featurize
from rag.answering.lists import Section, list_groups, listed_note, with_lists
from rag.answering.readings import Follow, gather, with_option_pages
from rag.config import operator
from rag.context import Context
from rag.knowledge.evidence import citations, evidence_records, renumber, scored_sentences
from rag.knowledge.passages import passage_of
from rag.reader import ReaderAnswer
from rag.reader.cache import load_reader
from rag.reader.support import is_supported
from rag.retrieval.enumeration import asks_for_several
from rag.retrieval.full_document import read_documents
from rag.retrieval.retriever import HybridRetriever
from rag.retrieval.sanitize import drop_instructions, has_instructions
from rag.state import StageTimer, State, abstained
from stores.chinese_script import script_language
from stores.ner import query_entities
from stores.text import language_of
from stores.tokenize import tokenize

FOLLOWED = 6  # texts searched for the pages they name (linking sentences, options)
FOLLOWED_HITS = 3  # index pages kept per text
_MARKER = re.compile(r"\[(\d{1,3})\]")
_SPACES = re.compile(r"\s+")


def answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("answer")
    settings = settings_of(runtime)
    language = state.get("language") or language_of(state["question"])
    context = state.get("selected", [])
    hops = state.get("hops") or []
    if not context and not any(hop.get("passages") for hop in hops):
        why = "no context survived grading and selection" + _web_reason(state)
        return _abstain(timer, state, language, why)
    evaluator = lazy_evaluator(settings)
    sentences = scored_sentences(state["question"], context, evaluator, operator().strips)
    best_evidence = max((s["score"] for s in sentences), default=-1.0)
    note = None
    if settings.llm_answer and context:
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
    reader = load_reader(operator().answer.reader_path)
    follow = _follow(state, runtime, settings)
    context = with_option_pages(state["question"], context, language, follow)
    entities = query_entities(state["question"], language)
    pool = state.get("candidates") or []
    gathered = gather(reader, state["question"], context, hops, language, pool, follow, entities)
    candidates = gathered.candidates
    if asks_for_several(state["question"]):
        candidates = with_lists(candidates, _sections(state, runtime, settings))
    unnamed = [e for e in entities if not any(names_subject(e, p) for p in [*context, *pool])]
    unheld = _unheld([*gathered.unheld, *unnamed])
    if not candidates:
        why = unheld or "no reading found an answer span"
        return _abstain(timer, state, language, why + _web_reason(state))
    _graded(candidates, state)
    # a plan of one hop is the question itself: read and judged as a single-hop question
    route = "multihop" if state.get("route") == "multihop" and len(hops) > 1 else "single"
    signals = {"verdict": state.get("verdict"), "route": route, "language": language,
               "best_evidence": best_evidence, "unnamed": len(unnamed) / len(entities) if entities else 0.0}
    featurize(candidates, state["question"], signals, context, _rarity(settings))
    chosen = choose(candidates, load_decision())
    groups = list_groups(chosen, candidates, settings.answer_threshold) if chosen.items else []
    answered = _listed(state["question"], groups, context, language, evaluator) if groups else \
        _formatted(state["question"], chosen, context, sentences, operator().answer.sentences, language, evaluator)
    counts: dict[str, Any] = {
        "context": len(context),
        "sentences": len(sentences),
        "candidates": len(candidates),
        "citations": len(answered["citations"]),
        "best_evidence": round(best_evidence, 4),
        "probability": round(chosen.probability, 4),
    }
    readings = [c.summary() for c in sorted(candidates, key=lambda c: -c.probability)]
    chain = _chain_text(chosen, answered)
    if not answers(chosen, settings.answer_threshold):
        why = f"probability {chosen.probability:.2f} < answer_threshold {settings.answer_threshold}"
        withheld = {"answer": answered["answer"], "citations": answered["citations"],
                    "confidence": round(chosen.probability, 4), "margin": _rounded(chosen.read.margin),
                    "reason": why}
        note = f"Not sure enough ({why}): {answered['answer']}" + (f"; {unheld}" if unheld else "") + _web_reason(state)
        record = timer.record("abstain", counts, (), note, candidates=readings, chain=chain)
        return {**abstained(language, state["question"]), "withheld": withheld, "trace": [record]}
    update = {**answered, "confidence": chosen.probability, "margin": chosen.read.margin}
    if groups:
        note = "; ".join(filter(None, [note, listed_note(groups)]))
    scores = [e["score"] for e in update["evidence"]]
    decision = f"{chosen.reading} answer ({chosen.read.kind})"
    return {**update, "trace": [timer.record(decision, counts, scores, note, candidates=readings, chain=chain)]}


def _sections(state: State, runtime: Runtime[Context], settings: Context) -> Section:
    """The text of the section a passage lies in (its document's chunks under the same headings; without headings,
    the passage and the chunk after it), read from the index, and where the passage starts in it: a list seldom
    fits in the chunk the reader pointed into."""
    try:
        bundle = bundle_of(settings)
    except IndexUnavailable:
        return lambda passage: (passage.get("text") or "", 0)
    retriever = HybridRetriever(bundle, visible=visible_of(runtime, bundle))
    filters = state.get("filters") or None
    documents: dict[str, list[Any]] = {}

    def section(passage: dict[str, Any]) -> tuple[str, int]:
        metadata, doc_id = passage.get("metadata") or {}, passage.get("doc_id")
        if passage.get("source") != "index" or not doc_id or not isinstance(metadata.get("start"), int):
            return passage.get("text") or "", 0
        if doc_id not in documents:
            documents[doc_id] = [hit.chunk for hit in read_documents(retriever, {doc_id: 0.0}, filters)]
        path, position = metadata.get("section_path"), int(metadata.get("position", -1))
        chunks = [c for c in documents[doc_id] if c.metadata.get("section_path") == path] if path else \
            [c for c in documents[doc_id] if int(c.metadata.get("position", -2)) in (position, position + 1)]
        if not chunks:
            return passage.get("text") or "", 0
        return joined(chunks), int(metadata["start"]) - int(chunks[0].metadata.get("start", 0))

    return section


def joined(chunks: Sequence[Any]) -> str:
    """The text of consecutive chunks of one document as it lay there (the chunks' `start` offsets place them)."""
    text, first = "", int(chunks[0].metadata.get("start", 0))
    for chunk in chunks:
        begin = int(chunk.metadata.get("start", 0)) - first
        text += _between(begin - len(text)) + chunk.text
    return text


def _between(gap: int) -> str:
    """The whitespace that lay between two chunks `gap` characters apart (the chunker cuts between sentences and
    keeps neither side's whitespace): two characters are a paragraph break; otherwise a line break and the next
    line's indentation (a wrapped list item goes on: a blank line there would end its list)."""
    if gap <= 0:
        return ""
    return "\n\n" if gap == 2 else "\n" + " " * (gap - 1)


def _unheld(subjects: Sequence[str]) -> str:
    """What the held-back note says of claims about something no passage names."""
    first: dict[str, str] = {}
    for subject in subjects:  # one name in two cases (the claim's words, NER's casefolded form) said once
        first.setdefault(subject.casefold(), subject)
    names = ", ".join(f"'{s}'" for s in first.values())
    return f"no document found mentions {names}" if names else ""


def _follow(state: State, runtime: Runtime[Context], settings: Context) -> Follow | None:
    """A search of the index (BM25: a linking sentence or an option's name holds a page's title) for the pages
    the given texts name, within the caller's filters and visible rows; None without an index."""
    try:
        bundle = bundle_of(settings)
    except IndexUnavailable:
        return None
    retriever = HybridRetriever(bundle, visible=visible_of(runtime, bundle))
    filters = state.get("filters") or None

    def follow(texts: Sequence[str]) -> list[dict[str, Any]]:
        return [passage_of(hit) for text in texts[:FOLLOWED]
                for hit in retriever.search(text, k=FOLLOWED_HITS, mode="bm25", filters=filters)]

    return follow


def _rarity(settings: Context) -> Any:
    """The index's term rarity; every term alike when the node is called without an index (a caller's own
    passages, as the benchmarks' reference rows and the tests hand it)."""
    try:
        return rarity_in(bundle_of(settings).bm25)
    except IndexUnavailable:
        return lambda term: 1.0


def rarity_in(bm25: Any) -> Any:
    """A term's smoothed inverse document frequency in the index; 0 for a term no document holds: no passage says
    it, so it tells no candidate from another (a Chinese question's bigram across two words, "岩砌", is one)."""
    frequencies, documents = bm25.vocabulary(), max(1, len(bm25))

    def idf(term: str) -> float:
        found = frequencies.get(term, 0)
        return math.log((documents + 1) / (found + 1)) + 1.0 if found else 0.0

    return idf


def _graded(candidates: list[Candidate], state: State) -> None:
    """A hop's passage carries the grade the CRAG evaluator gave it when the plan's evidence was graded."""
    passages: list[dict[str, Any]] = [*(state.get("candidates") or []), *(state.get("selected") or [])]
    grades = {p["id"]: p["grade"] for p in passages if p.get("grade") is not None and p.get("id")}
    for candidate in candidates:
        if candidate.passage.get("grade") is None and candidate.passage.get("id") in grades:
            candidate.passage["grade"] = grades[candidate.passage["id"]]


def _formatted(question: str, candidate: Candidate, context: list[dict[str, Any]], sentences: list[dict[str, Any]],
               n_evidence: int, language: str, evaluator: Any) -> dict[str, Any]:
    """The candidate cited: a one-pass or rule answer by its context passage with the best other evidence; a
    chain (along the plan, or a linked page's reading) by every hop's passage, each hop's sentence its evidence, first
    hop first."""
    if not candidate.chain:
        return _short_answer(question, candidate.read, context, sentences, n_evidence, language)
    cited = list(context)
    ids = [p.get("id") for p in cited]
    numbers_of: list[int] = []
    for step in candidate.chain:
        if step["passage"].get("id") not in ids:
            cited.append(step["passage"])
            ids.append(step["passage"].get("id"))
        numbers_of.append(ids.index(step["passage"].get("id")) + 1)
    numbers = renumber(numbers_of)
    chain_sentences = [step.get("sentence") or next(iter(sentences_holding(step["passage"].get("text") or "",
                                                                           step["answer"])), "")
                       for step in candidate.chain]
    scores = evaluator().score(candidate.chain[-1]["question"], chain_sentences) if any(chain_sentences) else []
    evidence = [{"n": numbers[n], "sentence": sentence, "score": round(float(score), 4)}
                for n, sentence, score in zip(numbers_of, chain_sentences, scores, strict=False) if sentence]
    text = f"{candidate.text} [{numbers[numbers_of[-1]]}]"
    return _answered(text, cited, numbers, evidence, language)


def _listed(question: str, groups: list[tuple[Candidate, list[str]]], context: list[dict[str, Any]], language: str,
            evaluator: Any) -> dict[str, Any]:
    """A list answer: each passage's items followed by its citation ("Portico, Tallyroll [1]; Sounding [2]"), the
    sentence each list was read from its evidence, and every item in `items` with its citation number."""
    cited = list(context)
    ids = [p.get("id") for p in cited]
    numbers_of = []
    for candidate, _ in groups:
        if candidate.passage.get("id") not in ids:  # a page the readings found beyond the context
            cited.append(candidate.passage)
            ids.append(candidate.passage.get("id"))
        numbers_of.append(ids.index(candidate.passage.get("id")) + 1)
    numbers = renumber(numbers_of)
    text = "; ".join(f"{', '.join(items)} [{numbers[n]}]" for (_, items), n in zip(groups, numbers_of, strict=True))
    leads = [candidate.read.sentence for candidate, _ in groups]
    scores = evaluator().score(question, leads) if any(leads) else [0.0] * len(leads)
    evidence = [{"n": numbers[n], "sentence": lead, "score": round(float(score), 4)}
                for lead, n, score in zip(leads, numbers_of, scores, strict=True) if lead]
    answered = _answered(text, cited, numbers, evidence, language)
    answered["items"] = [{"text": item, "n": numbers[n]}
                         for (_, items), n in zip(groups, numbers_of, strict=True) for item in items]
    return answered


def _chain_text(candidate: Candidate, answered: dict[str, Any]) -> list[dict[str, Any]]:
    """The hops the answer was read along, as the trace shows them."""
    ids = {c["id"]: c["n"] for c in answered["citations"]}
    return [{"question": step["question"], "answer": step["answer"], "n": ids.get(step["passage"].get("id"))}
            for step in candidate.chain]


def _short_answer(
    question: str,
    short: ReaderAnswer,
    context: list[dict[str, Any]],
    sentences: list[dict[str, Any]],
    n_evidence: int,
    language: str,
) -> dict[str, Any]:
    """The reader's span cited by its passage; evidence: the strip holding the span, then the best others that
    bear on the question (share a term with it or with the answer: an evaluator score alone can rate an
    unrelated sentence, even one in another language, as highly as the answer's)."""
    n = short.passage + 1
    own = [s for s in sentences if s["n"] == n]
    holding = [s for s in own if short.kind == "span" and _normalized(short.text) in _normalized(s["sentence"])]
    first = max(holding or own, key=lambda s: s["score"], default=None)
    bearing = set(tokenize(question)) | set(tokenize(short.text))
    others = sorted((s for s in sentences if s is not first and bearing & set(tokenize(s["sentence"]))),
                    key=lambda s: -s["score"])
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
    spec = settings.model_for(operator().models.answer)
    reply, error = ask_structured(
        spec,
        answer_messages(question, script_language(language, question), numbered),  # in the user's script
        AnswerReply,
        max_new_tokens=operator().answer.max_new_tokens,
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
        "evidence": [e for e in evidence if not has_instructions(e["sentence"])],  # chains, lists, an LLM's claims
        "abstained": False,
        "confidence": None,
        "margin": None,
        "withheld": None,
        "items": [],
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

