"""highlight: sentence-level evidence per selected passage and, when switched on, a compressed context.

Runs between select and answer. Every passage of the selected context is cut into the answer's own units
(rag.knowledge.strips: sentences, short ones joined) and scored by
rag.knowledge.evidence.scored_sentences, the scoring the answer uses (the run's evaluator, by default the
calibrated cosine on the index's embedder; strips refine already scored are reused). For a multi-hop plan
each strip also gets the best score against a sub-question (facet), so evidence for every hop survives. The
best strips are kept per passage (`highlight_per_passage`) and overall (`highlight_total`), at or above the
CRAG `lower` threshold (the one grading and refinement read): each passage's best comes first, so as many
passages as the total allows keep evidence.

Output `highlights`: [{passage_id, number, sentences: [{text, score, start, end}]}], `number` being the
passage's 1-based position in the context (the [n] the answer prompt uses) and start/end character offsets into
the passage's source text: the chunk text stored under passage_id in the index (a web page's content for a web
passage). That is the passage text itself unless refinement cut it, and what a UI can fetch by id to mark.

With `compress_context`, each passage's text becomes its kept strips in document order (a passage left without
any keeps its single best strip, so no selected source disappears) and its `strips` become those strips, so the
answer scores exactly what it reads. The trace reports the characters before and after and the share saved.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from nodes._runtime import bundle_of, lazy_evaluator, settings_of, thresholds_for
from rag.config import operator
from rag.context import Context
from rag.knowledge.evidence import add_facet_scores, choose_evidence, compress, located_units, scored_sentences
from rag.knowledge.selection import facet_texts
from rag.state import StageTimer, State


def highlight(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("highlight")
    settings = settings_of(runtime)
    context = state.get("selected", [])
    if not settings.highlight:
        return {"highlights": [], "trace": [timer.record("highlighting off", {"passages": len(context)})]}
    if not context:
        return {"highlights": [], "trace": [timer.record("no context", {"passages": 0})]}
    evaluator = lazy_evaluator(settings)
    sentences = scored_sentences(state["question"], context, evaluator, operator().strips)
    units = located_units(sentences, context)
    facets = facet_texts(state["question"], state.get("facets"))
    if facets:
        add_facet_scores(units, context, facets, evaluator)
    lower = thresholds_for(settings, bundle_of(settings))[1]
    kept = choose_evidence(units, operator().highlight.per_passage, operator().highlight.total, lower)
    highlights = [
        {
            "passage_id": passage["id"],
            "number": n,
            "sentences": [_public(u) for u in sorted(kept.get(n, []), key=lambda u: u["start"])],
        }
        for n, passage in enumerate(context, start=1)
        if kept.get(n)
    ]
    counts: dict[str, Any] = {
        "passages": len(context),
        "sentences": len(units),
        "highlighted": sum(len(h["sentences"]) for h in highlights),
    }
    scores = [u["score"] for group in kept.values() for u in group]
    update: dict[str, Any] = {"highlights": highlights}
    if not settings.compress_context:
        return {**update, "trace": [timer.record(f"highlighted {counts['highlighted']} sentences", counts, scores)]}
    compressed = compress(context, units, kept)
    before = sum(len(p["text"]) for p in context)
    after = sum(len(p["text"]) for p in compressed)
    counts.update(chars_before=before, chars_after=after, saved_ratio=round(1.0 - after / before, 4) if before else 0.0)
    decision = f"compressed context {before} -> {after} chars"
    return {**update, "selected": compressed, "trace": [timer.record(decision, counts, scores)]}


def _public(unit: dict[str, Any]) -> dict[str, Any]:
    return {"text": unit["text"], "score": round(unit["score"], 4), "start": unit["start"], "end": unit["end"]}
