"""web_search: rewrite the question into a web query, ask Tavily, refine the results like internal passages.

Off, no key, timeout, 401/403, 429, 5xx or a garbled reply: the node records why in `web_status` and the trace
and returns no web knowledge; the graph then re-retrieves or abstains. It never raises for a web failure.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from graph.context import Context
from nodes.common import bundle_of, evaluator_of, language_of, settings_of
from nodes.llm import ask_structured
from nodes.refine import refine_passages
from nodes.trace import StageTimer
from prompts.web_query import web_query_messages
from stores.multi_query import keyword_form
from stores.web import WebResult, WebSearchClient, WebSearchError


class WebQuery(BaseModel):
    query: str = Field(min_length=2, max_length=300)


def web_search(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    timer = StageTimer("web_search")
    settings = settings_of(runtime)
    if not settings.web_search:
        return _without_web(timer, "off", "web search is switched off (Context.web_search)")
    client = WebSearchClient(base_url=settings.web_base_url or None, timeout_s=settings.web_timeout_s)
    if not client.available:
        return _without_web(timer, "unavailable", "no TAVILY_API_KEY: web search unavailable")
    query, note = web_query(state, settings)
    try:
        results = client.search(
            query, max_results=settings.web_max_results, search_depth=settings.web_search_depth
        )
    except WebSearchError as error:
        return _without_web(timer, f"failed:{error.kind}", f"web search failed ({error}); query {query!r}")
    passages = [web_passage(r) for r in results[: settings.web_max_results]]
    evaluator = evaluator_of(settings, bundle_of(settings))
    knowledge, stats = refine_passages(state["question"], passages, evaluator, settings)
    scores = stats.pop("scores")
    status = "ok" if knowledge else "no relevant results"
    update: dict[str, Any] = {"web_knowledge": knowledge, "web_status": status}
    if settings.debug:
        update["debug"] = {"web_results": passages}
    counts = {"results": len(results), **stats}
    update["trace"] = [
        timer.record(
            f"{status}: {len(knowledge)} web passages",
            counts,
            scores,
            "; ".join(filter(None, [f"query {query!r}", note])),
        )
    ]
    return update


def web_query(state: dict[str, Any], settings: Context) -> tuple[str, str | None]:
    """The search query: the LLM's when switched on and valid, else the question's keywords."""
    question = state["question"]
    rule_based = state.get("keywords") or keyword_form(question)
    if not settings.llm_web_query:
        return rule_based, None
    language = state.get("language") or language_of(question)
    parsed, error = ask_structured(
        settings.model_for(settings.web_query_model),
        web_query_messages(question, language),
        WebQuery,
        max_new_tokens=48,
    )
    if parsed is None:
        return rule_based, f"{error}; keyword query used"
    return parsed.query.strip(), "LLM web query"


def web_passage(result: WebResult) -> dict[str, Any]:
    return {
        "id": result.url,
        "doc_id": None,
        "title": result.title,
        "text": result.content,
        "language": language_of(result.content),
        "source": "web",
        "url": result.url,
        "metadata": {},
        "score": result.score,
        "scores": {"web": result.score},
        "found_by": ["web"],
    }


def _without_web(timer: StageTimer, status: str, note: str) -> dict[str, Any]:
    return {
        "web_knowledge": [],
        "web_status": status,
        "trace": [timer.record(status, {"results": 0}, (), note)],
    }
