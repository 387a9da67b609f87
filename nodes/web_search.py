"""web_search: rewrite the question into a web query, ask Tavily, grade and refine the results like internal
passages (those graded at least `lower`, topped up to `refine_min_passages`).

Off, no key, timeout, 401/403, 429, 5xx or a garbled reply: the node records why in `web_status` and the trace
and returns no web knowledge; the graph then re-retrieves or abstains. It never raises for a web failure.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from models.structured import ask_structured
from nodes._runtime import bundle_of, evaluator_of, settings_of, thresholds_for
from prompts.web_query import WebQuery, web_query_messages
from rag.config import operator
from rag.context import Context
from rag.knowledge.passages import passage_text, web_passage
from rag.knowledge.strips import multihop_floor, passages_to_refine, refine_passages
from rag.retrieval.multi_query import keyword_form
from rag.retrieval.web import WebSearchClient, WebSearchError
from rag.state import StageTimer, State
from stores.text import language_of


def web_search(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("web_search")
    settings = settings_of(runtime)
    if not settings.web_search:
        return _without_web(timer, "off", "web search is switched off (Context.web_search)")
    config = operator()
    client = WebSearchClient(base_url=config.web.base_url or None, timeout_s=config.web.timeout_s)
    if not client.available:
        return _without_web(timer, "unavailable", "no TAVILY_API_KEY: web search unavailable")
    query, note = web_query(state, settings)
    try:
        results = client.search(query, max_results=config.web.max_results, search_depth=config.web.search_depth)
    except WebSearchError as error:
        return _without_web(timer, f"failed:{error.kind}", f"web search failed ({error}); query {query!r}")
    passages = [web_passage(r) for r in results[: config.web.max_results]]
    evaluator = evaluator_of(settings, bundle_of(settings))
    grades = evaluator.score(state["question"], [passage_text(p) for p in passages]) if passages else []
    graded = [{**p, "grade": float(g)} for p, g in zip(passages, grades, strict=True)]
    _, lower, _ = thresholds_for(settings, bundle_of(settings))
    kept, left_out = passages_to_refine(graded, lower, multihop_floor(state, config.refine.min_passages),
                                         state["question"])
    knowledge, stats = refine_passages(
        state["question"], kept, evaluator, config.strips,
        reference=left_out,
    )
    scores = stats.pop("scores")
    status = "ok" if knowledge else "no relevant results"
    update: dict[str, Any] = {"web_knowledge": knowledge, "web_status": status}
    if settings.debug:
        update["debug"] = {"web_results": passages}
    counts = {"results": len(results), "instructions_dropped": sum(r.instructions_dropped for r in results), **stats}
    update["trace"] = [
        timer.record(
            f"{status}: {len(knowledge)} web passages",
            counts,
            scores,
            "; ".join(filter(None, [f"query {query!r}", note])),
        )
    ]
    return update


def web_query(state: State, settings: Context) -> tuple[str, str | None]:
    """The search query: the LLM's when switched on and valid, else the question's keywords."""
    question = state["question"]
    rule_based = state.get("keywords") or keyword_form(question)
    if not operator().web.llm_query:
        return rule_based, None
    language = state.get("language") or language_of(question)
    parsed, error = ask_structured(
        settings.model_for(operator().models.web_query),
        web_query_messages(question, language),
        WebQuery,
        max_new_tokens=48,
    )
    if parsed is None:
        return rule_based, f"{error}; keyword query used"
    return parsed.query.strip(), "LLM web query"


def _without_web(timer: StageTimer, status: str, note: str) -> dict[str, Any]:
    return {
        "web_knowledge": [],
        "web_status": status,
        "trace": [timer.record(status, {"results": 0}, (), note)],
    }
