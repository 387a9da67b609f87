"""grade (CRAG): score every candidate in [-1, 1] with the relevance evaluator, then decide the action.

correct if any score > upper; incorrect if all < lower (or nothing was found); ambiguous otherwise. With the
calibrated cosine evaluator on the index's own embedder, the passage vectors stored at index time are the ones
the evaluator would compute, so they are used instead of embedding the passages again.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from evaluators.base import grade as crag_grade
from evaluators.cosine import CosineEvaluator, map_cosines
from evaluators.llm_grader import LLMGraderEvaluator
from evaluators.registry import load_evaluator
from models.embedder import canonical_name
from nodes._runtime import bundle_of, evaluator_of, settings_of, thresholds_for
from rag.context import Context
from rag.knowledge.passages import passage_text
from rag.knowledge.selection import facet_texts
from rag.knowledge.vectors import stored_cosines
from rag.state import StageTimer, State

# More than this share of an LLM grader's replies unparsed: the grade is made by FALLBACK_EVALUATOR instead.
UNPARSED_LIMIT = 0.5
FALLBACK_EVALUATOR = "embedded"
_log = logging.getLogger(__name__)


def grade(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("grade")
    settings = settings_of(runtime)
    bundle = bundle_of(settings)
    candidates = list(state.get("candidates", []))
    evaluator = evaluator_of(settings, bundle)
    cosine = evaluator if isinstance(evaluator, CosineEvaluator) and canonical_name(
        evaluator.embedder_name) == canonical_name(bundle.settings.embedder) else None

    def scores_for(question: str) -> list[float]:
        if cosine is not None:  # the index's own vectors: no re-embedding
            cosines = stored_cosines(bundle, question, candidates)
            return map_cosines(cosines, cosine.cos_lo, cosine.cos_hi).tolist()
        return evaluator.score(question, [passage_text(p) for p in candidates])

    grader = evaluator if isinstance(evaluator, LLMGraderEvaluator) else None
    if grader is not None:
        grader.take_counts()  # start this node's count
    scores: list[float] = scores_for(state["question"]) if candidates else []
    unparsed_note = ""
    if grader is not None:
        graded_n, unparsed = grader.take_counts()
        if graded_n and unparsed / graded_n > UNPARSED_LIMIT:
            # A grader whose replies cannot be read scores every passage -1 and the run abstains on everything.
            evaluator = load_evaluator(FALLBACK_EVALUATOR)
            scores = scores_for(state["question"])
            unparsed_note = (f"; {unparsed} of {graded_n} replies of {grader.name} unparsed (over "
                             f"{UNPARSED_LIMIT:.0%}): graded with {evaluator.name} instead")
            _log.warning("grade: %s", unparsed_note[2:])
    upper, lower, origin = thresholds_for(settings, bundle)
    verdict = crag_grade(scores, upper, lower)
    # The verdict asks whether anything answers the question. A planned question's bridge passage answers a
    # sub-question instead, so a passage's own grade (what refinement keeps it by) is its best score against the
    # question and every filled sub-question.
    kept_by = list(scores)
    for facet in facet_texts(state["question"], state.get("facets")) if candidates else []:
        kept_by = [max(a, b) for a, b in zip(kept_by, scores_for(facet), strict=True)]
    graded = [{**p, "grade": float(s)} for p, s in zip(candidates, kept_by, strict=True)]
    counts = {
        "passages": len(graded),
        "above_upper": sum(s > upper for s in scores),
        "below_lower": sum(s < lower for s in scores),
    }
    if grader is not None:
        counts["unparsed"] = unparsed
    note = f"{evaluator.name}; upper={upper}, lower={lower} ({origin}){unparsed_note}"
    round_ = state.get("retrieval_round", 0)
    attempt = {"round": round_, "strategy": (state.get("strategy") or {}).get("name"),
               "best": max(scores, default=-1.0), "candidates": graded, "grades": [float(s) for s in scores],
               "verdict": verdict}
    kept = best_attempt(state.get("best_attempt"), attempt)
    if kept is not attempt:
        note += (f"; kept round {kept['round']}'s passages ({kept['strategy']}, best grade {kept['best']:.2f}) "
                 f"over this round's ({attempt['strategy']}, {attempt['best']:.2f})")
    return {
        "candidates": kept["candidates"],
        "grades": kept["grades"],
        "verdict": kept["verdict"],
        "best_attempt": kept,
        "trace": [timer.record(kept["verdict"], counts, scores, note, round=round_)],
    }


def best_attempt(earlier: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    """The better-graded of two retrieval rounds (by best passage grade; a tie goes to the newer): escalation
    and rewrites may only ever improve what the answer reads."""
    if earlier and earlier.get("candidates") and earlier["best"] > current["best"]:
        return earlier
    return current
