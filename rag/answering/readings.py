"""The readings of a question. Each is a small function of what earlier stages left in state (the selected
context, the plan's hops) and gives candidate answers; none decides which one is given (decision.py does).

- one pass: the whole question over the selected context (the reader's best spans, or its rule answer for a
  yes / no or "A or B" question);
- along the plan (DecompRC's reading by decomposition, Min et al. 2019): a planned question's last hop is read
  over that hop's own passages, its slot filled by each of the previous hop's answers in turn, so "Where was
  the founder of X born?" is read as "Where was Ingrid Solvang born?" over Ingrid Solvang's page;
- passage by passage: the whole question over each of the first context passages alone, over the page of
  every entity the one-pass reading answered with, and over the pages that a page the question names links to
  (its sentences name their titles). Read together with the first hop's page ("X, founded by Ingrid Solvang,
  is based in Halvmere"), a bridge question's "where" is taken from it, or its bridge entity ("Ingrid
  Solvang"); read alone, the bridge entity's own page answers it. A linked page is asked the link's second hop
  ("Where was the Ingrid Solvang born?", bridging.py), and its candidate carries the link as its first hop (the
  sentence that names it), so the decision sees what led there. No plan needed, so
  it works in every language; the decision weighs which page a candidate came from and whether another reading
  led to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rag.answering import rules
from rag.answering.bridging import bridged_question, link_terms, unasked
from rag.answering.candidates import Candidate, about_a_look_alike, names_in, names_same, same_answer
from rag.answering.claims import CLAIM, Unheld, read_claim
from rag.answering.rules.compare import page_of, sentences
from rag.knowledge.passages import in_section
from rag.reader import Passage
from rag.reader.names import named_pages, roots
from rag.reader.questions import question_form
from rag.reader.rerank import span_type
from stores.tokenize import tokenize

if TYPE_CHECKING:  # the reader module imports torch; the graph loads it on first use only
    from rag.reader.reader import Reader

ONE_PASS_TOP = 3  # spans of the one-pass reading kept as candidates
CHAIN_TOP = 2  # fillings of a last hop read (the previous hop's best answers)
PER_PASSAGE = 4  # context passages read one by one
LINKED = 3  # pages linked from the question's named pages read one by one
BRIDGES = 2  # one-pass answers read on from, in the passages that name them
MENTIONS = 3  # passages naming such an answer, each asked the second hop from it

Follow = Callable[[Sequence[str]], list[dict[str, Any]]]
"""Pages of the index for the given texts (linking sentences best first, or an option's name): a search of the
index the answer node builds."""


def reader_passage(passage: dict[str, Any]) -> Passage:
    header = (passage.get("metadata") or {}).get("table_header") or ""
    return Passage(passage["text"], passage.get("title") or "", float(passage.get("score") or 0.0), header)


@dataclass
class Gathered:
    """The readings' candidates, and the subjects of claims that no passage names (the documents do not hold
    them: no evidence of "no")."""

    candidates: list[Candidate]
    unheld: list[str] = field(default_factory=list)


def gather(reader: Reader, question: str, context: Sequence[dict[str, Any]], hops: Sequence[dict[str, Any]],
           language: str, pool: Sequence[dict[str, Any]] = (), follow: Follow | None = None,
           entities: Sequence[str] = ()) -> Gathered:
    """Every reading's candidates: one pass and along the plan's hops, and for a span question (no rule answered
    it) passage by passage. `pool`: the retrieved passages grading and refinement set aside, where a page the
    question's named pages link to may be (graded against the whole compound question, a bridge entity's page
    seldom passes); `follow`: a search of the index for the pages a sentence names, which finds a linked page
    that retrieval for the whole question never reached; `entities`: the names the question holds, whose
    look-alikes' pages are flagged for the decision (candidates.about_a_look_alike). A yes / no question about one
    subject is judged by the claim reading (claims.py) over every passage that names its subject."""
    chained = along_hops(reader, hops, language)
    # a claim about a bridge entity ("Was the founder of X born in Y?") is checked along the chain first: the
    # last hop's claim, its slot filled ("Was Ann Wye born in Y?"), is read over that hop's passages
    claims = [c for c in chained if c.reading in ("yes_no", CLAIM)]
    # ... and then the whole question's claim is not read: its subject is the first hop's page ("Veltrane
    # Systems"), which does not say where its founder was born, whatever it says of the company itself
    whole = [c for c in one_pass(reader, question, context, language) if not (claims and c.reading == CLAIM)]
    candidates = [*claims, *whole, *(c for c in chained if c.reading not in ("yes_no", CLAIM))]
    if candidates and candidates[0].reading == "one_pass":
        # a one-pass answer is read on as a bridge only for a question planned as a chain: of a one-hop question
        # it is the answer or a wrong one of the asked kind ("the ferry built in 2010" -> another ferry)
        candidates += per_passage(reader, question, context, language, candidates, pool, follow,
                                  bridged=len(hops) > 1)
    named = [terms for terms in (set(tokenize(name)) for name in entities) if terms]
    for candidate in candidates:  # the decision weighs it: a report's section is no page about one entity
        candidate.look_alike = about_a_look_alike(candidate, named)
    gathered = Gathered([])
    everything = [*context, *pool]
    for candidate in candidates:
        if candidate.reading != CLAIM:
            gathered.candidates.append(candidate)
            continue
        asked = candidate.chain[-1]["question"] if candidate.chain else question
        passages = [step["passage"] for step in candidate.chain[-1:]] + list(everything) if candidate.chain \
            else everything
        judged = read_claim(reader, asked, passages, language, candidate.rank, candidate.chain)
        if isinstance(judged, Unheld):
            gathered.unheld.append(judged.subject)
            continue
        if judged is not None and not judged.chain and judged.read.passage >= len(context):
            # decided on a retrieved page refinement set aside: cited as the one step read there
            judged.chain = [{"question": asked, "answer": judged.text, "passage": judged.passage,
                             "sentence": judged.read.sentence}]
        gathered.candidates.append(judged or candidate)  # no claim the grammar finds: the reader's reading stands
    return gathered


def with_option_pages(question: str, context: Sequence[dict[str, Any]], language: str,
                      follow: Follow | None) -> list[dict[str, Any]]:
    """The context, and for an "A or B" question the page of each option it lacks, searched for in the index by
    the option's name: the options rule compares only options it has the pages of, and retrieval for the whole
    question may have reached one of them only ("Which came out first, the Tansy T1 or the Tansy T2?")."""
    form = question_form(question, language)
    if form.kind != "options" or follow is None:
        return list(context)
    pages = list(context)
    for option in form.options:
        if page_of(option, [reader_passage(p) for p in pages]) is None:
            found = [p for p in follow([option]) if page_of(option, [reader_passage(p)]) is not None]
            pages = _distinct([*pages, *found[:1]])
    return pages


def one_pass(reader: Reader, question: str, context: Sequence[dict[str, Any]], language: str) -> list[Candidate]:
    """The reader's best spans for the whole question, best first (a rule's answer alone)."""
    ranked = rules.read_ranked(reader, question, [reader_passage(p) for p in context], language, ONE_PASS_TOP)
    return [
        Candidate(read, read.rule or "one_pass", dict(context[read.passage]), rank)
        for rank, read in enumerate(ranked)
    ]


def per_passage(reader: Reader, question: str, context: Sequence[dict[str, Any]], language: str,
                found: Sequence[Candidate] = (), pool: Sequence[dict[str, Any]] = (),
                follow: Follow | None = None, bridged: bool = False) -> list[Candidate]:
    """The reader's best span for the whole question in each of the first context passages read alone, and in
    the pages of the entities `found` names; then the pages (of the context or the pool) that the question's
    named pages link to, each asked the link's second hop (bridging.py; span questions only: a rule answers yes / no
    and "A or B" from the whole context). With `follow`, the pages the linking sentences name are searched for in
    the index too. `bridged` (a question planned as a chain): the one-pass answers that may be bridges are read on
    over the passages that name them (mentions)."""
    candidates = []
    everything = _distinct([*context, *pool])
    if follow is not None:
        said = sorted(linking_sentences(question, everything), key=lambda found: -found[2])
        everything = _distinct([*everything, *follow([unasked(sentence, question) for _, sentence, _ in said])])
    links = linked_pages(question, everything)
    bridges = [(b, hop_question(question, b)) for b in answers_to_read_on(question, found)] if bridged else []
    if follow is not None:  # a section of a long document that names the bridge: retrieval may not have reached it
        everything = _distinct([*everything, *follow([asked for _, asked in bridges])])
    links += mentions(question, bridges, everything)
    pages = [*range(min(PER_PASSAGE, len(context))), *bridge_pages(found, context)]
    for index, link in [*((i, None) for i in pages), *((link["to"], link) for link in links)]:
        passage = everything[index]
        source = everything[link["from"]] if link else {}
        bridge: Candidate | None = link.get("bridge") if link else None
        if link is None:
            asked = question
        else:
            asked = link.get("asked") or bridged_question(question, source.get("title") or "", link["sentence"],
                                                          passage.get("title") or "", passage["text"])
        read = rules.read_ranked(reader, asked, [reader_passage(passage)], language, top=1)
        if read and not read[0].rule and not (bridge and _shares_terms(read[0].text, bridge.text)):
            chain = []
            if link is not None:  # the first hop: the linked page's title, or the one-pass answer read on
                first = {"question": question, "answer": passage.get("title") or "", "passage": dict(source),
                         "sentence": link["sentence"]}
                if bridge is not None:
                    first.update(answer=bridge.text, margin=bridge.read.margin, share=bridge.read.confidence,
                                 rank=bridge.rank)
                chain = [first,
                         {"question": asked, "answer": " ".join(read[0].text.split()), "passage": dict(passage)}]
            candidates.append(Candidate(replace(read[0], passage=index), "linked" if chain else "per_passage",
                                        dict(passage), index, chain))
    return candidates


def linking_sentences(question: str, context: Sequence[dict[str, Any]]) -> list[tuple[int, str, int]]:
    """(page, sentence, weight) for each sentence of a context page the question names that, with its neighbours,
    holds some of the question's other terms (weight: how many; a term most of the page's sentences hold does not
    count): where a page names the bridge of a question about it ("Where was Celia Marchbank's teacher born?" ->
    her "she studied under ..." sentence)."""
    titles = [p.get("title") or "" for p in context]
    asked = link_terms(question)
    found = []
    for source in named_pages(question, titles):
        parts = sentences(context[source].get("text") or "")
        said = [link_terms(part) for part in parts]
        common = {t for t in asked if 2 * sum(t in terms for terms in said) > len(said)} if len(said) >= 4 else set()
        own = link_terms(titles[source]) | common
        for at, sentence in enumerate(parts):
            weight = len((set().union(*said[max(0, at - 1):at + 2]) & asked) - own)
            if weight:
                found.append((source, sentence.strip(), weight))
    return found


def linked_pages(question: str, context: Sequence[dict[str, Any]], top: int = LINKED) -> list[dict[str, Any]]:
    """Context pages that a page the question names links to, best first by how many of the question's other
    terms the linking sentence and its neighbours hold (at least one): "Where was Celia Marchbank's teacher
    born?" -> the page of the architect named in Celia Marchbank's "she studied under ..." sentence. A page is
    linked when the sentence names its title (reader.names) or holds a term of its title that no other page's
    title has ("Бережной, Лев Матвеевич" from "у Льва Бережного"). Each: {"from": the named page, "to": the
    linked page, "sentence": the linking one}."""
    titles = [p.get("title") or "" for p in context]
    named = named_pages(question, titles)
    terms = [roots(title) for title in titles]
    unique = [{t for t in own if len(t) >= 4 and not any(t in other for j, other in enumerate(terms) if j != i)}
              for i, own in enumerate(terms)]
    best: dict[int, tuple[int, int, str]] = {}
    for source, sentence, weight in linking_sentences(question, context):
        said = roots(sentence)
        linked = set(named_pages(sentence, titles)) | {i for i, own in enumerate(unique) if own & said}
        for target in linked - {source, *named}:
            if weight > best.get(target, (0, 0, ""))[0]:
                best[target] = (weight, source, sentence)
    ranked = sorted(best, key=lambda t: (-best[t][0], t))[:top]
    return [{"from": best[t][1], "to": t, "sentence": best[t][2]} for t in ranked]


def answers_to_read_on(question: str, found: Sequence[Candidate]) -> list[Candidate]:
    """The first BRIDGES distinct one-pass answers that may be a bridge rather than the answer: read in a section of
    a longer document (on a page about one entity the bridge's own page is read instead: bridge_pages, linked),
    not a number or a year, not words the question says ("the captain of the ship that serves line X" answered
    "the Vetlan")."""
    asked = set(tokenize(question))
    bridges: list[Candidate] = []
    for candidate in found:
        terms = set(tokenize(candidate.text))
        if (candidate.reading == "one_pass" and candidate.read.kind == "span" and in_section(candidate.passage)
                and terms and not terms <= asked
                and span_type(candidate.text) not in ("year", "number")
                and not any(same_answer(candidate.text, b.text) for b in bridges)):
            bridges.append(candidate)
    return bridges[:BRIDGES]


def _shares_terms(answer: str, bridge: str) -> bool:
    """A second hop's answer that says the bridge again ("Volga is the longest river" from "the Volga river")
    is the bridge's own page answering the question, not a hop on from it."""
    return bool(set(tokenize(answer)) & set(tokenize(bridge)))


def hop_question(question: str, bridge: Candidate) -> str:
    """The question's second hop from a one-pass answer: what the answer's sentence answered of the question
    is the answer ("Who is the captain of the ship that serves line X?" -> "Who is the captain of the Vetlan?")."""
    sentence = bridge.read.sentence or bridge.text
    return bridged_question(question, sentence, sentence, bridge.text, "")


def mentions(question: str, bridges: Sequence[tuple[Candidate, str]], passages: Sequence[dict[str, Any]]
             ) -> list[dict[str, Any]]:
    """For each bridge, the passages other than its own with a sentence that names it and, with its neighbours,
    says more of what the question asks than the bridge's own sentence did (a section of a long document about
    the entity the first pass answered with: it has no page of its own), the first MENTIONS by how many such
    terms: links as linked_pages gives them, from the bridge's passage, with the bridge and its second hop's
    question (`bridges`: each with it, hop_question)."""
    found = []
    asked = link_terms(question)
    for bridge, hop in bridges:
        own = bridge.passage.get("id")
        source = next((i for i, p in enumerate(passages) if p.get("id") == own), None)
        if source is None:
            continue
        wanted = asked - link_terms(bridge.read.sentence) - link_terms(bridge.text)
        weights = {}
        for i, passage in enumerate(passages):
            if passage.get("id") == own or not names_in(bridge.text, passage.get("text") or ""):
                continue
            parts = sentences(passage.get("text") or "")
            said = [link_terms(part) for part in parts]
            weights[i] = max((len(set().union(*said[max(0, at - 1):at + 2]) & wanted)
                              for at, part in enumerate(parts) if names_in(bridge.text, part)), default=0)
        ranked = sorted((i for i in weights if weights[i]), key=lambda i: (-weights[i], i))
        found += [{"from": source, "to": i, "sentence": bridge.read.sentence, "bridge": bridge, "asked": hop}
                  for i in ranked[:MENTIONS]]
    return found


def _distinct(passages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The passages, each id once, first kept."""
    seen: set[Any] = set()
    kept = []
    for passage in passages:
        if passage.get("id") not in seen:
            seen.add(passage.get("id"))
            kept.append(passage)
    return kept


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
    first): a span, or a yes / no when the last hop is a claim. A hop that found no passage, or whose producer
    found no answer, gives nothing: the chain stops."""
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
            read = rules.read_ranked(reader, query, passages, language, top=1)
            if not read or read[0].rule not in ("", "yes_no", CLAIM):  # the last hop asks for a span or a yes / no
                continue
            last = read[0]
            step = {"question": query, "answer": " ".join(last.text.split()),
                    "passage": dict(hop["passages"][last.passage]), "margin": last.margin, "share": last.confidence}
            reading = last.rule or "hop_chain"
            candidates.append(Candidate(last, reading, step["passage"], rank, [*chain, step]))
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

