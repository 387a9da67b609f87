"""understand: the question's language, its analysis against the index, and its query variants (the route
node then chooses the retrieval tool from that analysis).

Variants: a rule-based keyword form always (when on); LLM rewrites when switched on, each kept only if its
embedder cosine to the question reaches `rewrite_min_cosine` (a rewrite that drifted in meaning would pull in
wrong passages). Pseudo-relevance-feedback terms are added by retrieve, which has the first results.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import bundle_of, settings_of
from prompts.rewrite import Rewrites, rewrite_messages
from rag.config import operator
from rag.context import Context
from rag.knowledge.vectors import query_vector
from rag.policy import checked_question
from rag.retrieval.analysis import analyse
from rag.state import StageTimer, State, new_run


def understand(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("understand")
    settings = settings_of(runtime)
    question = checked_question(state)  # a wrong type is refused here, naming the field, before any node uses it
    analysis = analyse(question, bundle_of(settings).bm25)
    language = analysis.language
    if state.get("recommend_only"):  # the route node only recommends: no variants to write
        analysed = {"language": language, "analysis": analysis.as_dict(), "retrieval_round": 0}
        return new_run({**analysed, "trace": [timer.record(f"language={language}", {})]}, state)
    variants: list[str] = []
    keywords = analysis.keywords
    config = operator().understand
    if config.keyword_variant and keywords.lower() != question.lower():
        variants.append(keywords)
    note = None
    scores: list[float] = []
    if config.llm_rewrites and config.max_rewrites > 0:
        rewrites, kept_scores, note = llm_rewrites(question, language, settings)
        variants += [r for r in rewrites if r.lower() not in {v.lower() for v in variants}]
        scores = kept_scores
    update: dict[str, Any] = {
        "language": language,
        "keywords": keywords,
        "variants": variants,
        "query": question,
        "analysis": analysis.as_dict(),
        "retrieval_round": 0,
        "best_attempt": {},
        "max_retrieval_rounds": max(0, settings.max_retrieval_rounds),
        "web_status": "not run",
        "knowledge": [],
        "web_knowledge": [],
        "hops": [],  # a thread's earlier planned question must not be read along again
    }
    if settings.max_retrieval_rounds == 0:  # a budget of 0 means none: said at once, not found out at the end
        note = "; ".join(filter(None, [note, "max_retrieval_rounds=0: no re-retrieval rounds"]))
    decision = f"language={language}, {len(variants)} variants"
    update["trace"] = [timer.record(decision, {"variants": len(variants)}, scores, note)]
    return new_run(update, state)  # the first node of every run: this run's trace only


def llm_rewrites(
    question: str, language: str, settings: Context
) -> tuple[list[str], list[float], str | None]:
    """LLM variants that stay close to the question, their cosines, and a note for the trace."""
    config = operator()
    spec = settings.model_for(config.models.rewrite)
    parsed, error = ask_structured(
        spec, rewrite_messages(question, language, config.understand.max_rewrites), Rewrites
    )
    if parsed is None:
        return [], [], f"{error}; rule-based variants only"
    candidates = list(dict.fromkeys(q.strip() for q in parsed.queries if q.strip() and q.strip() != question))
    candidates = candidates[: config.understand.max_rewrites]
    if not candidates:
        return [], [], "LLM gave no usable rewrite"
    embedder = bundle_of(settings).embedder
    cosines = embedder.embed_queries(candidates) @ query_vector(embedder, question)
    kept = [
        (q, float(c)) for q, c in zip(candidates, cosines, strict=True) if c >= config.understand.rewrite_min_cosine
    ]
    dropped = len(candidates) - len(kept)
    note = f"LLM rewrites kept {len(kept)}/{len(candidates)}" + (
        f" (dropped {dropped} below cosine {config.understand.rewrite_min_cosine}; min {float(np.min(cosines)):.3f})"
        if dropped
        else ""
    )
    return [q for q, _ in kept], [c for _, c in kept], note

