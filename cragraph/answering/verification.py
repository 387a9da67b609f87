"""Every candidate's passage read by the verifier: does it state this answer to the question it was read for?

The question is the one the candidate answers: the whole question for a one-pass or per-passage reading, the last
hop's filled question for a chain ("Where was Ann Wye born?"), so a bridge answer is judged against the page that
should state it. A rule's yes / no or compared option has no span of its own to check and keeps no verdict;
a verified claim (claims.py) already has its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cragraph.answering.candidates import Candidate
from cragraph.reader.types import Passage

if TYPE_CHECKING:
    from cragraph.reader.verifier import Verifier


def verify_candidates(verifier: Verifier, question: str, candidates: Sequence[Candidate], language: str) -> None:
    """Fill `verdict` of each span candidate without one, one batched pass over all of them (a candidate read
    twice, same answer and page, is judged once)."""
    pending = [c for c in candidates if not c.verdict and c.read.kind == "span" and c.text]
    first: dict[tuple[str, str, str], Candidate] = {}
    for candidate in pending:
        first.setdefault(_key(question, candidate), candidate)
    if not first:
        return
    items = [(asked, answer, Passage(c.passage.get("text") or "", c.passage.get("title") or ""))
             for (asked, answer, _), c in first.items()]
    verdicts = dict(zip(first, verifier.verify_each(items, language), strict=True))
    for candidate in pending:
        found = verdicts[_key(question, candidate)]
        candidate.verdict = {"right": found.stated, "absent": found.absent}


def _key(question: str, candidate: Candidate) -> tuple[str, str, str]:
    asked = candidate.chain[-1]["question"] if candidate.chain else question
    return asked, candidate.text, str(candidate.passage.get("id") or candidate.passage.get("text") or "")
