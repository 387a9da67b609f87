"""The claim reading: a yes / no question about one subject is decided by reading the claim it makes,
the question it hides and the claimed value, against the passages that name that subject.

Why: read as the question it hides ("Where was Lev Landau born?" for "Was Lev Landau born in Baku?"), the
reader's single best span had to name the claimed value for a "yes", so a page that states the claim with other
words around the value ("for the discovery of polonium", "founded in 1742 by the wool merchant Y") came out "no",
and a claim about someone the documents never mention came out "no" too. Now the reader reads the hidden
question on every page naming the subject; the page is the subject's own (its title named by the question) where
the reader answers most surely (its margin over no answer: a page that speaks of the subject but not of the asked
fact says nothing either way; a verifier's "states an answer" picked pages worse on the training folders),
and the reader's pointer over that page gives the claimed value's share among every span it would answer with
(occurrences of the value, in any inflection, against the rival spans): "yes" when the value is what the page
answers, "no" when another span is. No page naming the subject is no answer at all. The verdict and its share go
to the decision like every other signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rag.answering.candidates import Candidate, named_by
from rag.answering.rules.forms import YES_NO
from rag.answering.rules.hidden_question import WORD, claim_subject, hidden_claim
from rag.knowledge.passages import heading
from rag.reader.decode import best_spans
from rag.reader.names import root, roots
from rag.reader.types import Passage, ReaderAnswer
from stores.chinese_script import simplified
from stores.scripts import HAN
from stores.tokenize import tokenize

if TYPE_CHECKING:  # the reader imports torch; loaded on first use only
    from rag.reader.reader import Reader

CLAIM = "claim"


@dataclass(frozen=True)
class Unheld:
    """The claim's subject, which no passage names: the documents say nothing of it."""

    subject: str


def names_subject(subject: str, passage: dict[str, Any]) -> bool:
    """The passage names the subject: every root of its terms stands in the passage's heading (a section's: its
    document's title and the headings above it) or text (roots meet a name in any inflection: "Ландау" / "Ландау,",
    "Ларионова" / "Ларионов")."""
    wanted = roots(subject)
    return bool(wanted) and wanted <= roots(f"{heading(passage)} {passage.get('text') or ''}")


def read_claim(reader: Reader, question: str, passages: Sequence[dict[str, Any]], language: str, rank: int = 0,
               chain: Sequence[dict[str, Any]] = ()) -> Candidate | Unheld | None:
    """The claim's verdict as a candidate ("yes" / "no" cited by the page that decided it), Unheld when no passage
    names its subject, None when the question hides no claim the grammar finds (the reader's own yes / no answer
    stands then)."""
    titles = [p.get("title") or "" for p in passages]
    claim = hidden_claim(question, titles, language)
    if claim is None:
        return None
    subject = claim_subject(question, titles, language)
    pages = [i for i, p in enumerate(passages) if subject and names_subject(subject, p)]
    if subject and not pages:
        return Unheld(subject)
    pages = pages or list(range(len(passages)))
    read = [Passage(passages[i].get("text") or "", titles[i]) for i in pages]
    shares = [value_share(reader, claim.question, page, claim.value, language) for page in read]
    asked = set(tokenize(question))
    # the page about the subject (its title named by the question), where the reader answers most surely
    best = max(range(len(pages)), key=lambda k: (named_by(passages[pages[k]], asked), shares[k][1]))
    share, margin, sentence = shares[best]
    holds = share >= 0.5
    yes, no = YES_NO.get(language, YES_NO["en"])
    answer = ReaderAnswer(yes if holds else no, "yes" if holds else "no", pages[best], sentence, -1, -1, 0.0,
                          margin=margin, confidence=share if holds else 1.0 - share, rule=CLAIM)
    steps = [dict(step) for step in chain]
    page = dict(passages[pages[best]])
    if steps:  # the last hop is this claim: its answer is the verdict, from the page that decided it
        steps[-1].update(answer=answer.text, passage=page, sentence=sentence)
    return Candidate(answer, CLAIM, page, rank, steps)


def value_share(reader: Reader, question: str, page: Passage, value: str, language: str) -> tuple[float, float, str]:
    """(share, margin, sentence): the softmax share of the spans holding the claimed value among every span the
    reader would answer the hidden question with in this page (its best spans, and each occurrence of the value, in
    any inflection, as a span of its own), the best span's margin over the no-answer score, and the sentence of the
    value's best occurrence (else of the best span)."""
    scored = reader.score(simplified(question), [Passage(simplified(page.text), simplified(page.title))], language)
    enc, ctx = scored.encoded, scored.context
    spans = best_spans(scored.start, scored.end, enc.context_start, enc.context_end,
                       reader.config["max_answer_tokens"], top=SPANS)
    if not spans:
        return 0.0, 0.0, ""
    starts, ends = enc.offsets[:, 0], enc.offsets[:, 1]
    occurrences = []
    for s, e in value_occurrences(ctx.text, simplified(value)):
        inside = [t for t in range(enc.context_start, enc.context_end) if ends[t] > s and starts[t] < e]
        if inside and inside[-1] - inside[0] < reader.config["max_answer_tokens"]:
            occurrences.append((inside[0], inside[-1], float(scored.start[inside[0]] + scored.end[inside[-1]])))
    pool = list(dict.fromkeys([*spans, *occurrences]))
    top = max(score for _, _, score in pool)
    weights = np.exp(np.array([score for _, _, score in pool]) - top)
    holding = np.array([any(a <= e2 and b >= s2 for s2, e2, _ in occurrences) for a, b, _ in pool])
    share = float(weights[holding].sum() / weights.sum())
    margin = float(spans[0][2] - (scored.start[0] + scored.end[0]))
    at = max(occurrences, key=lambda o: o[2])[0] if occurrences else spans[0][0]
    located = ctx.locate(int(starts[at]), int(ends[at]))
    sentence = next((x.text for x in ctx.sentences if located and x.passage == located[0].passage
                     and x.start <= located[1] < x.end), "")
    return share, margin, sentence


SPANS = 20  # the reader's best spans the claimed value competes with


def value_occurrences(text: str, value: str) -> list[tuple[int, int]]:
    """Where the text says the value: as written (case-blind), else, word by word, runs of words that share a
    root with the value's words ("Ольховце" for "Ольховец"; a word of four letters or more)."""
    value = " ".join(value.split())
    if not value:
        return []
    lowered = text.casefold()
    wanted_text = value.casefold()
    found = []
    at = lowered.find(wanted_text)
    while at >= 0:
        found.append((at, at + len(wanted_text)))
        at = lowered.find(wanted_text, at + 1)
    if found or HAN.search(value):
        return found
    wanted = {root(w.casefold()) for w in WORD.findall(value) if len(w) >= 4}
    runs: list[tuple[int, int]] = []
    for match in WORD.finditer(text):
        if root(match.group(0).casefold()) in wanted:
            if runs and not text[runs[-1][1]:match.start()].strip():
                runs[-1] = (runs[-1][0], match.end())
            else:
                runs.append(match.span())
    return runs
