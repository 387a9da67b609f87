"""Where the settings that left the run's Context went: moved to the operator configuration, or removed.

Read by every place a setting is named (a client's dict, `--set`, CRAGRAPH_<FIELD>, a config file key), so a
setting from an older version is refused with where it lives now, never ignored.
"""

from __future__ import annotations

import dataclasses

from rag.knowledge.strips import StripSettings
from rag.planning.settings import MultihopSettings
from rag.retrieval.graph_walk import GraphSettings
from rag.retrieval.retriever import RetrievalSettings
from rag.retrieval.techniques import Techniques

CONFIG_FILE = "cragraph.toml"

# old Context field -> "section.key" in the operator configuration (the prefixed stage sections are added below)
MOVED: dict[str, str] = {
    "llm_rewrites": "understand.llm_rewrites",
    "max_rewrites": "understand.max_rewrites",
    "rewrite_min_cosine": "understand.rewrite_min_cosine",
    "keyword_variant": "understand.keyword_variant",
    "llm_route": "route.llm",
    "retrieve_k": "rerank.retrieve_k",
    "rerank": "rerank.enabled",
    "rerank_k": "rerank.k",
    "rerank_fused_weight": "rerank.fused_weight",
    "cross_encoder": "rerank.cross_encoder",
    "cross_encoder_pool": "rerank.cross_encoder_pool",
    "cross_encoder_threshold": "rerank.cross_encoder_threshold",
    "upper": "grade.upper",
    "lower": "grade.lower",
    "refine": "refine.enabled",
    "refine_min_passages": "refine.min_passages",
    "web_max_results": "web.max_results",
    "web_timeout_s": "web.timeout_s",
    "web_base_url": "web.base_url",
    "web_search_depth": "web.search_depth",
    "llm_web_query": "web.llm_query",
    "select_alpha": "select.alpha",
    "context_budget_chars": "select.budget_chars",
    "highlight_per_passage": "highlight.per_passage",
    "highlight_total": "highlight.total",
    "answer_sentences": "answer.sentences",
    "answer_max_new_tokens": "answer.max_new_tokens",
    "reader_path": "answer.reader_path",
    "rewrite_model": "models.rewrite",
    "route_model": "models.route",
    "web_query_model": "models.web_query",
    "expansion_model": "models.expansion",
    "answer_model": "models.answer",
}
for _kind, _section, _prefix in (
    (RetrievalSettings, "retrieval", "retrieval_"),
    (GraphSettings, "graph", "graph_"),
    (Techniques, "techniques", ""),
    (StripSettings, "strips", "strip_"),
    (MultihopSettings, "multihop", "multihop_"),
):
    MOVED.update({_prefix + item.name: f"{_section}.{item.name}" for item in dataclasses.fields(_kind)})

# old setting -> (its old config key, when it had one, or None; what replaces it)
REMOVED: dict[str, tuple[str | None, str]] = {
    "embedder": (None, "the index's own embedder is always used (chosen when building: cragraph index --embedder)"),
    "index_thresholds": (None, "thresholds stored for the index (python -m cragraph_lab eval evaluator "
                               "--store-thresholds) are "
                               "always used when there are any, else [grade] upper / lower"),
    "retrieval_rrf_k": ("retrieval.rrf_k", "rrf fusion uses k = 60 (k = 10 and 30 measured no different)"),
    "retrieval_dense_weight": ("retrieval.dense_weight", "rrf fusion weighs its lists equally (a lower BM25 "
                                                         "weight was measured no better)"),
    "retrieval_bm25_weight": ("retrieval.bm25_weight", "rrf fusion weighs its lists equally (a lower BM25 weight "
                                                       "was measured no better)"),
    "multihop_question_weight": ("multihop.question_weight", "the plan's evidence lists merge with equal weights"),
    "multihop_sub_weight": ("multihop.sub_weight", "the plan's evidence lists merge with equal weights"),
    "multihop_bridge_weight": ("multihop.bridge_weight", "the plan's evidence lists merge with equal weights"),
}
# The gates one calibrated decision replaced (issue 43): refused by name, so an old server environment says so.
_GATES = ("answer_min_score", "answer_min_margin", "answer_min_confidence", "answer_min_grade", "strip_threshold",
          "highlight_min_score", "select_min_gain", "multihop_filter_threshold")
REMOVED.update({name: (None, "one calibrated decision replaced the answer gates: answer_threshold (per run) sets "
                             "how sure an answer must be") for name in _GATES})


def env_name(path: str) -> str:
    """The environment variable of a config key: "retrieval.pool" -> CRAGRAPH_RETRIEVAL__POOL."""
    section, key = path.split(".")
    return f"CRAGRAPH_{section.upper()}__{key.upper()}"


def where(path: str) -> str:
    section, key = path.split(".")
    return f"{CONFIG_FILE} [{section}] {key} or {env_name(path)}"


def moved_message(name: str) -> str | None:
    """Why `name` (an old Context field) cannot be set per run: where it lives now, or what replaced it."""
    if name in MOVED:
        return f"{name} is an operator setting now: set it in {where(MOVED[name])}"
    if name in REMOVED:
        return f"{name} was removed: {REMOVED[name][1]}"
    return None
