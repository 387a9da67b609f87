"""The readings of a question. Each is a small function of what earlier stages left in state (the selected
context, the plan's hops) and gives candidate answers; none decides which one is given (decision.py does).

- one pass: the whole question over the selected context (the reader's best spans, or its rule answer for a
  yes / no or "A or B" question);
- along the plan (DecompRC's reading by decomposition, Min et al. 2019): a planned question's last hop is read
  over that hop's own passages, its slot filled by each of the previous hop's answers in turn, so "Where was
  the founder of X born?" is read as "Where was Ingrid Solvang born?" over Ingrid Solvang's page;
- passage by passage: the whole question over each of the first context passages alone, and over the page of
  every entity the one-pass reading answered with. Read together with the first hop's page ("X, founded by
  Ingrid Solvang, is based in Halvmere"), a bridge question's "where" is taken from it, or its bridge entity
  ("Ingrid Solvang"); read alone, the bridge entity's own page answers it. No plan needed, so it works in every
  language; the decision weighs which page a candidate came from and whether another reading led to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cragraph.answering.candidates import Candidate, names_same
from cragraph.reader import Passage

if TYPE_CHECKING:  # the reader module imports torch; the graph loads it on first use only
    from cragraph.reader.reader import Reader

ONE_PASS_TOP = 3  # spans of the one-pass reading kept as candidates
CHAIN_TOP = 2  # fillings of a last hop read (the previous hop's best answers)
PER_PASSAGE = 4  # context passages read one by one


def reader_passage(passage: dict[str, Any]) -> Passage:
    return Passage(passage["text"], passage.get("title") or "", float(passage.get("score") or 0.0))


def gather(reader: Reader, question: str, context: Sequence[dict[str, Any]], hops: Sequence[dict[str, Any]],
           language: str) -> list[Candidate]:
    """Every reading's candidates: one pass and along the plan's hops, and for a span question (no rule answered
    it) passage by passage."""
    candidates = [*one_pass(reader, question, context, language), *along_hops(reader, hops, language)]
    if candidates and candidates[0].reading == "one_pass":
        candidates += per_passage(reader, question, context, language, candidates)
    return candidates


def one_pass(reader: Reader, question: str, context: Sequence[dict[str, Any]], language: str) -> list[Candidate]:
    """The reader's best spans for the whole question, best first (a rule's answer alone)."""
    ranked = reader.read_ranked(question, [reader_passage(p) for p in context], language, ONE_PASS_TOP)
    return [
        Candidate(read, read.rule or "one_pass", dict(context[read.passage]), rank)
        for rank, read in enumerate(ranked)
    ]


def per_passage(reader: Reader, question: str, context: Sequence[dict[str, Any]], language: str,
                found: Sequence[Candidate] = ()) -> list[Candidate]:
    """The reader's best span for the whole question in each of the first context passages read alone, then in
    the pages of the entities `found` names (span questions only: a rule answers yes / no and "A or B" from the
    whole context)."""
    candidates = []
    for index in [*range(min(PER_PASSAGE, len(context))), *bridge_pages(found, context)]:
        passage = context[index]
        read = reader.read_ranked(question, [reader_passage(passage)], language, top=1)
        if read and not read[0].rule:
            candidates.append(Candidate(replace(read[0], passage=index), "per_passage", dict(passage), index))
    return candidates


def bridge_pages(found: Sequence[Candidate], context: Sequence[dict[str, Any]]) -> list[int]:
    """Context passages after the first PER_PASSAGE whose title is an answer some candidate gave from another
    passage: the pages of the entities a bridge question passes through, in the candidates' order."""
    pages: list[int] = []
    for candidate in found:
        for index in range(PER_PASSAGE, len(context)):
            title = context[index].get("title") or ""
            if (index not in pages and context[index].get("id") != candidate.passage.get("id")
                    and names_same(title, candidate.text)):
                pages.append(index)
    return pages


def along_hops(reader: Reader, hops: Sequence[dict[str, Any]], language: str) -> list[Candidate]:
    """The last hops of a planned chain read with their slots filled, one candidate per filling (best filling
    first). A hop that found no passage, or whose producer found no answer, gives nothing: the chain stops."""
    by_id = {hop["id"]: hop for hop in hops}
    candidates: list[Candidate] = []
    for hop in hops:
        if hop.get("slot") or not hop.get("deps") or not hop.get("passages"):
            continue
        passages = [reader_passage(p) for p in hop["passages"]]
        for rank, query in enumerate(hop.get("queries", [])[:CHAIN_TOP]):
            chain = _chain_to(hop, query, by_id)
            if not chain:
                continue
            read = reader.read_ranked(query, passages, language, top=1)
            if not read or read[0].rule:  # the last hop asks for a span
                continue
            last = read[0]
            step = {"question": query, "answer": " ".join(last.text.split()),
                    "passage": dict(hop["passages"][last.passage]), "margin": last.margin, "share": last.confidence}
            candidates.append(Candidate(last, "hop_chain", step["passage"], rank, [*chain, step]))
    return candidates


def _chain_to(hop: dict[str, Any], query: str, by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The earlier hops' answers that filled `query`, first hop first; [] when no producer's answer is in it."""
    for dep in hop.get("deps", []):
        producer = by_id.get(dep)
        if not producer or not producer.get("slot"):
            continue
        for rank, found in enumerate(producer.get("answers", [])):
            if found["text"] and found["text"] in query:
                passages = {p.get("id"): p for p in producer.get("passages", [])}
                asked = str((producer.get("queries") or [producer["question"]])[0])  # its first filling
                step = {"question": asked, "answer": found["text"],
                        "passage": dict(passages.get(found.get("passage_id"), {})), "margin": found.get("margin"),
                        "share": found.get("share"), "rank": rank}
                earlier = _chain_to(producer, step["question"], by_id) if producer.get("deps") else []
                return [*earlier, step]
    return []

