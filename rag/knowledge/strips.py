"""Knowledge strips (CRAG's decompose-then-recompose): cut passages into strips, score them, keep the strong.

At the default threshold (-1) every strip of a refined passage is kept: the default evaluator's scores are
list-relative, so they order the evidence well but drop answer sentences when used as a cut; refinement then
removes whole passages (below `lower`) only.

A strip is a sentence, or a run of consecutive short sentences joined until `min_chars`, cut from the passage
by character offsets (stores.text.sentence_spans) so recomposed text is exact source text. Strips are scored
with the title prefixed (a sentence's subject is often only in the title).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.base import RelevanceEvaluator
from rag.knowledge.passages import heading
from rag.reader.names import named_pages
from rag.settings import setting
from stores.markdown_tables import TABLE_ROW
from stores.text import language_of, sentence_spans
from stores.types import titled

_DENSE_SCRIPTS = frozenset({"zh", "ja", "ko"})


@dataclass
class StripSettings:
    """How passages are cut into strips."""

    min_chars: int = setting(60, "Sentences shorter than this are joined with the next into one strip.")
    max_chars: int = setting(400, "Longest strip; longer sentences stay whole but are not joined.")


def multihop_floor(state: Mapping[str, Any], at_least: int) -> int:
    """`at_least` for a question of multi-hop shape (routed multi-hop, or one the rule decomposer reads as a bridge
    or a comparison), else 0: such a question needs two passages by construction, while a single-hop question's
    second-best passage is mostly a distractor for the reader."""
    shaped = state.get("route") == "multihop" or bool((state.get("analysis") or {}).get("rule_plan"))
    return at_least if shaped else 0


def passages_to_refine(passages: list[dict[str, Any]], lower: float, at_least: int, question: str
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept, left out): the passages graded at least `lower`, topped up with the best-graded others to `at_least`,
    and the pages of the entities `question` names, whatever their grade; then the rest, each in rank order.

    Why the top-up: the grader is sure of one passage per question far more often than a multi-hop answer lies in
    one (the second hop of a bridge question scores low against the question itself). Why the named pages: each
    entity of "Which is older, A or B?" or "Were A and B both born in W?" is graded against the whole question,
    and the page of one of them alone answers only half of it.
    """
    grade = [p.get("grade", 1.0) for p in passages]
    best = sorted(range(len(passages)), key=lambda i: -grade[i])[:at_least]
    named = named_pages(question, [p.get("title") or "" for p in passages])
    keep = {i for i in range(len(passages)) if grade[i] >= lower} | set(best) | set(named)
    return ([p for i, p in enumerate(passages) if i in keep], [p for i, p in enumerate(passages) if i not in keep])


def strip_spans(text: str, language: str, min_chars: int, max_chars: int) -> list[tuple[int, int]]:
    """Sentence spans, a sentence shorter than `min_chars` joined with the next while under `max_chars`.

    Chinese, Japanese and Korean carry about three times the meaning per character: their limits are a third.
    """
    if language in _DENSE_SCRIPTS:
        min_chars, max_chars = max(1, min_chars // 3), max(1, max_chars // 3)
    spans: list[tuple[int, int]] = []
    for start, end in sentence_spans(text, language):
        if spans and spans[-1][1] - spans[-1][0] < min_chars and end - spans[-1][0] <= max_chars:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    if (
        len(spans) > 1
        and spans[-1][1] - spans[-1][0] < min_chars
        and spans[-1][1] - spans[-2][0] <= max_chars
    ):
        spans[-2:] = [(spans[-2][0], spans[-1][1])]
    return spans


def passage_strips(passage: dict[str, Any], strips: StripSettings) -> list[tuple[int, int]]:
    """The strip spans of one passage, in its own language."""
    language = passage.get("language") or language_of(passage["text"])
    return strip_spans(passage["text"], language, strips.min_chars, strips.max_chars)


def recomposed(text: str, kept: Sequence[dict[str, Any]]) -> str:
    """The kept strips in order, joined by a space, or by a line break where the source breaks the line before or
    after a table row (a table's rows are strips of their own: joined on one line they are no table to the reader,
    and a sentence joined to a row would read as its cell)."""
    parts = [kept[0]["text"]] if kept else []
    for before, strip in zip(kept, kept[1:], strict=False):
        rows = TABLE_ROW.match(strip["text"]) or TABLE_ROW.match(before["text"].rsplit("\n", 1)[-1])
        parts.append(("\n" if rows and "\n" in text[before["end"] : strip["start"]] else " ") + strip["text"])
    return "".join(parts)


def refine_passages(
    question: str,
    passages: list[dict[str, Any]],
    evaluator: RelevanceEvaluator,
    strips: StripSettings,
    reference: Sequence[dict[str, Any]] = (),
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Refined copies of `passages`: each cut into strips scored against the question (the evidence and its
    scores), recomposed in order; a passage with no strip is dropped. Every strip is kept: cutting by the
    evaluator's strip scores dropped answers on training data. `reference` (the graded passages refinement leaves
    out) is cut and scored with them, and then dropped: the evaluator's scores are list-relative, so the strips
    are judged against the evidence that lost, as an unrefined context's strips are, not only against each other
    (one kept passage's strips alone read as irrelevant far more often).
    """
    pieces: list[tuple[int, int, int]] = []
    scored_passages = [*passages, *reference]
    for index, passage in enumerate(scored_passages):
        for start, end in passage_strips(passage, strips):
            pieces.append((index, start, end))
    texts = [titled(heading(scored_passages[i]), scored_passages[i]["text"][s:e]) for i, s, e in pieces]
    scores = evaluator.score(question, texts) if texts else []
    by_passage: dict[int, list[dict[str, Any]]] = {}
    for (index, start, end), score in zip(pieces, scores, strict=True):
        strip = {
            "text": scored_passages[index]["text"][start:end],
            "start": start,
            "end": end,
            "score": float(score),
        }
        by_passage.setdefault(index, []).append(strip)
    knowledge = []
    for index, passage in enumerate(passages):
        kept = by_passage.get(index, [])
        if kept:
            knowledge.append(
                {
                    **passage,
                    "text": recomposed(passage["text"], kept),
                    "strips": kept,
                    "original_chars": len(passage["text"]),
                }
            )
    own = [strip["score"] for index in range(len(passages)) for strip in by_passage.get(index, [])]
    stats = {
        "passages": len(passages),
        "strips": len(own),
        "strips_kept": sum(len(k["strips"]) for k in knowledge),
        "passages_kept": len(knowledge),
        "reference_strips": len(pieces) - len(own),
        "scores": own,
    }
    return knowledge, stats
