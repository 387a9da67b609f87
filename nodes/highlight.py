"""highlight: sentence-level evidence per selected passage and, when switched on, a compressed context.

Runs between select and answer. Every passage of the selected context is cut into the answer's own units
(nodes.refine.strip_spans: sentences, short ones joined) and scored by nodes.answer.scored_sentences, the scoring
the answer uses (the run's evaluator, by default the calibrated cosine on the index's embedder; strips refine
already scored are reused). For a multi-hop plan each strip also gets the best score against a sub-question
(facet), so evidence for every hop survives. The best strips are kept per passage (`highlight_per_passage`)
and overall (`highlight_total`), above `highlight_min_score`: each passage's best comes first, so as many
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

from graph.context import Context
from nodes.answer import scored_sentences
from nodes.common import bundle_of, evaluator_of, settings_of, titled
from nodes.select import facet_texts
from nodes.trace import StageTimer


def highlight(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("highlight")
    settings = settings_of(runtime)
    context = state.get("selected", [])
    if not settings.highlight:
        return {"highlights": [], "trace": [timer.record("highlighting off", {"passages": len(context)})]}
    if not context:
        return {"highlights": [], "trace": [timer.record("no context", {"passages": 0})]}
    units = located_units(state["question"], context, settings)
    facets = facet_texts(state)
    if facets:
        add_facet_scores(units, context, facets, settings)
    kept = choose_evidence(
        units, settings.highlight_per_passage, settings.highlight_total, settings.highlight_min_score
    )
    highlights = [
        {
            "passage_id": passage["id"],
            "number": n,
            "sentences": [_public(u) for u in sorted(kept.get(n, []), key=lambda u: u["start"])],
        }
        for n, passage in enumerate(context, start=1)
        if kept.get(n)
    ]
    counts = {
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


def located_units(question: str, context: list[dict[str, Any]], settings: Context) -> list[dict[str, Any]]:
    """scored_sentences' strips with their passage number n and their offsets in the passage's source text.

    A refined passage's strips carry their offsets in the original chunk (or web page) text, and
    scored_sentences returns them in order; an unrefined passage's text is its source text, and its strips
    are exact substrings in order, so a forward search from the previous strip's end finds each one.
    """
    units: list[dict[str, Any]] = []
    cursors: dict[int, int] = {}
    seen: dict[int, int] = {}
    for scored in scored_sentences(question, context, settings):
        n, sentence = scored["n"], scored["sentence"]
        passage = context[n - 1]
        strips = passage.get("strips") or []
        k = seen[n] = seen.get(n, -1) + 1
        if k < len(strips) and strips[k].get("text") == sentence and "start" in strips[k]:
            start = int(strips[k]["start"])
        else:
            start = passage["text"].find(sentence, cursors.get(n, 0))
            if start < 0:  # not verbatim (an odd upstream strip): it cannot be marked or kept as source text
                continue
            cursors[n] = start + len(sentence)
        units.append({"n": n, "text": sentence, "start": start, "end": start + len(sentence),
                      "score": float(scored["score"])})
    return units


def add_facet_scores(
    units: list[dict[str, Any]], context: list[dict[str, Any]], facets: list[str], settings: Context
) -> None:
    """Raise each unit's score to its best score against any sub-question, scored as the answer scores."""
    if not units:
        return
    evaluator = evaluator_of(settings, bundle_of(settings))
    texts = [titled(context[u["n"] - 1].get("title") or "", u["text"]) for u in units]
    for facet in facets:
        for unit, score in zip(units, evaluator.score(facet, texts), strict=True):
            unit["score"] = max(unit["score"], float(score))


def choose_evidence(
    units: list[dict[str, Any]], per_passage: int, total: int, min_score: float
) -> dict[int, list[dict[str, Any]]]:
    """Passage number -> kept units. Each passage's best unit is taken first (best passages first), then the
    remaining units by score, within both limits and above `min_score`."""
    eligible = sorted((u for u in units if u["score"] >= min_score), key=lambda u: (-u["score"], u["n"], u["start"]))
    best_of: dict[int, dict[str, Any]] = {}
    for unit in eligible:
        best_of.setdefault(unit["n"], unit)
    order = [*best_of.values(), *(u for u in eligible if best_of[u["n"]] is not u)]
    kept: dict[int, list[dict[str, Any]]] = {}
    taken = 0
    for unit in order:
        if taken >= total:
            break
        group = kept.setdefault(unit["n"], [])
        if len(group) < per_passage:
            group.append(unit)
            taken += 1
    return {n: group for n, group in kept.items() if group}


def compress(
    context: list[dict[str, Any]], units: list[dict[str, Any]], kept: dict[int, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Context passages cut down to their kept strips in document order; ids and every other field stay."""
    compressed = []
    for n, passage in enumerate(context, start=1):
        chosen = kept.get(n) or _best_unit(units, n)
        if not chosen:
            compressed.append(passage)
            continue
        strips, pieces, offset = [], [], 0
        for unit in sorted(chosen, key=lambda u: u["start"]):
            strips.append({"text": unit["text"], "start": offset, "end": offset + len(unit["text"]),
                           "score": unit["score"]})
            pieces.append(unit["text"])
            offset += len(unit["text"]) + 1
        compressed.append(
            {
                **passage,
                "text": " ".join(pieces),
                "strips": strips,
                "original_chars": passage.get("original_chars", len(passage["text"])),
                "compressed": True,
            }
        )
    return compressed


def _best_unit(units: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    own = [u for u in units if u["n"] == n]
    return [max(own, key=lambda u: u["score"])] if own else []


def _public(unit: dict[str, Any]) -> dict[str, Any]:
    return {"text": unit["text"], "score": round(unit["score"], 4), "start": unit["start"], "end": unit["end"]}
