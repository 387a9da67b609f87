"""The run's settings (LangGraph `context_schema`): what a person changes per run, shown and edited in Studio.

Stage internals (fusion constants, strip and window sizes, budgets, thresholds) are the operator's and live in
`rag.config`, read once per process. A field still at its default here is overridden by the environment
variable CRAGRAPH_<FIELD NAME IN CAPITALS> (CRAGRAPH_INDEX, CRAGRAPH_WEB_SEARCH=false), as langchain-ai's
react-agent template does, so a server started with env vars and a `graph.invoke` without context agree. Values
given explicitly win over the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any, Literal, get_origin, get_type_hints

from rag.settings import checked, default_of, model_setting, parse_text, setting

ENV_PREFIX = "CRAGRAPH_"


class UnknownSetting(ValueError):
    """A caller named a setting that does not exist, or no longer exists per run. A ValueError, so a LangGraph
    server returns its message."""


@dataclass(kw_only=True)
class Context:
    """Settings for one run of the CRAG graph. Defaults suit the embedded offline models on a small CPU."""

    def __new__(cls, *args: Any, **values: Any) -> Context:
        """Refuse a setting that moved to the operator configuration or was removed, saying where it lives now,
        before the dataclass's TypeError names only the keyword."""
        if set(values) - {item.name for item in fields(cls)}:
            from rag.config.moved import moved_message  # only then: it imports every stage's settings

            moved = [message for message in map(moved_message, sorted(values)) if message]
            if moved:
                raise UnknownSetting("; ".join(moved))
        return super().__new__(cls)

    # ---- what to answer from -------------------------------------------------------------------------------
    index: str = setting(".cragraph/index", "Folder of the index bundle to answer from (cragraph index ...).")
    index_backend: Literal["bundle", "milvus"] = setting(
        "bundle",
        "Where the index lives: 'bundle' (the folder `index`) or 'milvus' (a Milvus collection at `index_uri`, "
        "built with cragraph index --backend milvus).",
    )
    index_uri: str = setting(
        "", "The Milvus index when index_backend is 'milvus': a Milvus Lite file (FILE.db) or a Milvus server "
        "(http://host:19530).",
    )
    web_search: bool = setting(
        True, "Search the web (Tavily; needs TAVILY_API_KEY) when the index's passages are graded ambiguous or "
        "incorrect. Off: answer from the index only.",
    )
    # ---- models --------------------------------------------------------------------------------------------
    chat_model: str = model_setting(
        "embedded",
        "Chat model for every LLM stage unless the operator names a stage's own: 'embedded' (SmolLM2-135M, "
        "offline) or 'provider:model'.",
    )
    llm_answer: bool = setting(
        False,
        "Write the answer with the chat model (validated JSON with citations); off = the short-answer reader's "
        "span from the selected passages.",
    )
    evaluator: str = setting(
        "embedded",
        "Relevance evaluator for grading, strip refinement and evidence: 'embedded' (the trained e5-small "
        "head shipped in evaluators/weights), 'cosine' (calibrated similarity on the index's embedder), "
        "'t5:<model>', 'cross-encoder:<model>', 'llm:<provider:model>'.",
    )
    # ---- answers -------------------------------------------------------------------------------------------
    answer_threshold: float = setting(
        0.5,
        "Answer when the best candidate's probability of being right (one calibrated model over every reading's "
        "signals) reaches this, else abstain and show it held back. Lower gives more answers and more wrong "
        "ones; 0.5 is where a wrong answer costs what a right one earns. 0..1.",
    )
    multihop: Literal["auto", "always", "never"] = setting(
        "auto",
        "Route to the multi-hop planner: auto (when the rule decomposer finds a bridge or comparison "
        "structure), always, or never.",
    )
    max_retrieval_rounds: int = setting(
        1, "Re-retrievals with a rewritten query when grading says incorrect and the web cannot help (0 = abstain "
        "at once).",
    )
    strategy: Literal["manual", "auto"] = setting(
        "manual",
        "manual: the retrieval techniques the operator configured; auto: a strategy chosen per question from its "
        "features (what `cragraph recommend` shows), with a confidence and a reason in the trace and the output.",
    )
    latency_budget_ms: float = setting(
        0.0,
        "Per-question retrieval budget; 0 = none. Tight: BM25 only; medium: hybrid and cheap expansions; "
        "loose: everything incl. rerank and LLM expansions. Chosen from latencies measured in this process.",
    )
    # ---- chat and human review -----------------------------------------------------------------------------
    llm_followup: bool = setting(
        False,
        "On a thread, let the chat model rewrite a follow-up ('and where was he born?') as a standalone question "
        "(validated; the rule rewrite when it fails). Off: the rule resolves pronouns and 'and ...' questions "
        "against the previous turn.",
    )
    review: Literal["off", "before_web", "before_answer"] = setting(
        "off",
        "Human review: pause the run with interrupt() before a web search (resume with action approve, skip or "
        "reject) or before the answer is given (approve, edit with an answer, or reject). Needs a checkpointer "
        "(the server has one; in Python compile with one and pass a thread_id).",
    )
    # ---- output --------------------------------------------------------------------------------------------
    highlight: bool = setting(
        True, "Return the best evidence sentences of each selected passage as `highlights`, with passage ids and "
        "character offsets.",
    )
    compress_context: bool = setting(
        False, "Hand the answer only the highlighted sentences of each passage (in document order; a passage "
        "without any keeps its best one); the trace reports the characters saved.",
    )
    debug: bool = setting(False, "Keep intermediate passages of every stage in the output's `debug`.")

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for item in fields(self):
            if not item.init:
                continue
            raw = os.environ.get(ENV_PREFIX + item.name.upper())
            if raw is not None and getattr(self, item.name) == default_of(item):
                setattr(self, item.name, parse_setting(raw, hints[item.name], item.name))
            if get_origin(hints[item.name]) is Literal:  # refuse other values when the context is made
                checked(f"Context.{item.name}", getattr(self, item.name), hints[item.name])
        threshold = self.answer_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
            raise ValueError(f"Context.answer_threshold is a probability, 0..1, not {threshold!r}")

    def model_for(self, stage_model: str) -> str:
        """The chat model spec a stage uses: its own (the operator's [models]) if set, else `chat_model`."""
        return stage_model or self.chat_model


def parse_setting(raw: str, kind: Any, name: str) -> Any:
    """A Context field's value from text (CRAGRAPH_<FIELD>, `--set`)."""
    try:
        return parse_text(raw, kind)
    except ValueError as error:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r}: {error}") from None
