"""refine: decompose passages into knowledge strips, score each strip, drop weak ones, recompose in order.

A strip is a sentence, or a run of consecutive short sentences joined until `strip_min_chars`, cut from the
passage by character offsets (stores.text.sentence_spans) so recomposed text is exact source text. Strips are
scored with the title prefixed (a sentence's subject is often only in the title). The same function refines
web results.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from evaluators.base import RelevanceEvaluator
from graph.context import Context
from nodes.common import bundle_of, evaluator_of, language_of, settings_of, titled
from nodes.trace import StageTimer
from stores.text import sentence_spans

_DENSE_SCRIPTS = frozenset({"zh", "ja", "ko"})


def refine(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("refine")
    settings = settings_of(runtime)
    kept_passages = [p for p in state.get("candidates", []) if p.get("grade", 1.0) >= settings.lower]
    if not settings.refine:
        knowledge = [{**p, "strips": []} for p in kept_passages]
        return {
            "knowledge": knowledge,
            "trace": [timer.record("refinement off", {"passages": len(knowledge)})],
        }
    evaluator = evaluator_of(settings, bundle_of(settings))
    knowledge, stats = refine_passages(state["question"], kept_passages, evaluator, settings)
    update: dict[str, Any] = {"knowledge": knowledge}
    if settings.debug:
        update["debug"] = {"refine": knowledge}
    update["trace"] = [
        timer.record(f"kept {stats['strips_kept']} of {stats['strips']} strips", stats, stats.pop("scores"))
    ]
    return update


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


def refine_passages(
    question: str, passages: list[dict[str, Any]], evaluator: RelevanceEvaluator, settings: Context
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Refined copies of `passages` (weak strips dropped, emptied passages dropped) and counts for the trace.

    A passage graded above `upper` keeps at least its best strip: it was judged relevant as a whole.
    """
    pieces: list[tuple[int, int, int]] = []
    for index, passage in enumerate(passages):
        language = passage.get("language") or language_of(passage["text"])
        for start, end in strip_spans(
            passage["text"], language, settings.strip_min_chars, settings.strip_max_chars
        ):
            pieces.append((index, start, end))
    texts = [titled(passages[i].get("title", ""), passages[i]["text"][s:e]) for i, s, e in pieces]
    scores = evaluator.score(question, texts) if texts else []
    by_passage: dict[int, list[dict[str, Any]]] = {}
    for (index, start, end), score in zip(pieces, scores, strict=True):
        strip = {
            "text": passages[index]["text"][start:end],
            "start": start,
            "end": end,
            "score": float(score),
        }
        by_passage.setdefault(index, []).append(strip)
    knowledge = []
    for index, passage in enumerate(passages):
        strips = by_passage.get(index, [])
        kept = [s for s in strips if s["score"] >= settings.strip_threshold]
        if not kept and strips and passage.get("grade", -1.0) > settings.upper:
            kept = [max(strips, key=lambda s: s["score"])]
        if kept:
            knowledge.append(
                {
                    **passage,
                    "text": " ".join(s["text"] for s in kept),
                    "strips": kept,
                    "original_chars": len(passage["text"]),
                }
            )
    stats = {
        "passages": len(passages),
        "strips": len(pieces),
        "strips_kept": sum(len(k["strips"]) for k in knowledge),
        "passages_kept": len(knowledge),
        "scores": [float(s) for s in scores],
    }
    return knowledge, stats
