"""Runtime settings of the agent (LangGraph `context_schema`): shown and edited in Studio, overridable by env.

Every field still at its default is overridden by the environment variable CRAGRAPH_<FIELD NAME IN CAPITALS>
(e.g. CRAGRAPH_INDEX, CRAGRAPH_CHAT_MODEL, CRAGRAPH_WEB_SEARCH=false), as langchain-ai's react-agent template
does, so a server started with env vars and a `graph.invoke` without context agree. Values given explicitly
win over the environment.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from typing import Any, get_type_hints

ENV_PREFIX = "CRAGRAPH_"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _setting(default: Any, description: str) -> Any:
    if isinstance(default, dict | list):
        return field(default_factory=lambda: type(default)(default), metadata={"description": description})
    return field(default=default, metadata={"description": description})


@dataclass(kw_only=True)
class Context:
    """Settings for one run of the CRAG graph. Defaults suit the embedded offline models on a small CPU."""

    # ---- index and models ----------------------------------------------------------------------------------
    index: str = _setting(
        ".cragraph/index", "Folder of the index bundle to answer from (cragraph index ...)."
    )
    embedder: str = _setting(
        "",
        "Embedding model; empty = the one the index was built with. A different "
        "name is refused, since its vectors would not be comparable.",
    )
    evaluator: str = _setting(
        "cosine",
        "Relevance evaluator for grading and strip refinement: 'cosine' "
        "(calibrated similarity on the index's embedder), 'embedded', "
        "'t5:<model>', 'cross-encoder:<model>', 'llm:<provider:model>'.",
    )
    chat_model: str = _setting(
        "embedded",
        "Chat model for every LLM stage unless a stage names its own: "
        "'embedded' (SmolLM2-135M, offline) or 'provider:model'.",
    )
    rewrite_model: str = _setting(
        "", "Chat model for query rewrites (understand, re-retrieve); empty = chat_model."
    )
    web_query_model: str = _setting(
        "", "Chat model that turns the question into a web query; empty = chat_model."
    )
    answer_model: str = _setting("", "Chat model that writes the answer; empty = chat_model.")
    # ---- understand ----------------------------------------------------------------------------------------
    llm_rewrites: bool = _setting(
        False,
        "Ask the chat model for query variants (off by default: the embedded 135M model rewrites poorly).",
    )
    max_rewrites: int = _setting(3, "Most LLM query variants kept.")
    rewrite_min_cosine: float = _setting(
        0.85,
        "An LLM variant is kept only if its embedder cosine to the "
        "question is at least this (e5 cosines sit in 0.7-1.0).",
    )
    keyword_variant: bool = _setting(True, "Add a rule-based keyword-only variant of the question.")
    # ---- retrieve and rerank -------------------------------------------------------------------------------
    retrieval_mode: str = _setting("hybrid", "hybrid, bm25 or dense.")
    retrieval_pool: int = _setting(100, "Candidates each ranked list contributes to fusion.")
    retrieval_fusion: str = _setting(
        "dynamic",
        "How BM25 and dense lists are fused: dynamic (min-max score fusion, dense weight chosen per query), "
        "score (fixed dense weight retrieval_alpha) or rrf.",
    )
    retrieval_alpha: float = _setting(0.8, "Dense weight of `score` fusion (BM25 gets 1 - alpha).")
    retrieval_alpha_peaked: float = _setting(
        0.6, "Dynamic fusion: dense weight when BM25's top hit clearly stands out (a strong lexical match)."
    )
    retrieval_alpha_flat: float = _setting(0.9, "Dynamic fusion: dense weight otherwise.")
    retrieval_peak_gap: float = _setting(
        0.15, "Dynamic fusion: relative gap between BM25's first and second scores that counts as standing out."
    )
    retrieval_rrf_k: int = _setting(60, "Reciprocal-rank-fusion constant k (1-based ranks).")
    retrieval_dense_weight: float = _setting(1.0, "Weight of the dense lists in rrf fusion.")
    retrieval_bm25_weight: float = _setting(1.0, "Weight of the BM25 lists in rrf fusion.")
    retrieval_extra: dict[str, Any] = _setting(
        {}, "Further RetrievalSettings fields by name (new fusion knobs), passed through as given."
    )
    # ---- retrieval techniques (stores/techniques.py) ---------------------------------------------------------
    strategy: str = _setting(
        "manual",
        "manual: the technique switches below; auto: a strategy chosen per question from its features "
        "(what `cragraph recommend` shows), with a confidence and a reason in the trace and the output.",
    )
    latency_budget_ms: float = _setting(
        0.0,
        "Per-question retrieval budget; 0 = none. Tight: BM25 only; medium: hybrid and cheap expansions; "
        "loose: everything incl. rerank and LLM expansions. Chosen from latencies measured in this process.",
    )
    entity_retrieval: bool = _setting(
        False, "Search the index's entity field with the question's entities (only when it names some)."
    )
    multi_query: bool = _setting(
        False, "Rule-based variants (corpus-vocabulary synonyms, spelling fixes, keywords), each searched and fused in "
        "with technique_weight."
    )
    multi_query_max: int = _setting(3, "Most rule-based variants.")
    prf: bool = _setting(
        False, "RM3 pseudo-relevance feedback: expansion terms from a BM25 first pass (measured: small gain on "
        "SciFact, a loss on HotpotQA)."
    )
    prf_docs: int = _setting(5, "Top first-pass passages RM3 takes terms from.")
    prf_terms: int = _setting(10, "RM3 expansion terms.")
    prf_original_weight: float = _setting(0.5, "RM3 interpolation weight of the original query terms.")
    query_class_alpha: bool = _setting(
        False,
        "Dense weight from the query's class (term-heavy / semantic / mixed, from cheap features) instead of "
        "retrieval_fusion's rule. Measured: +.022 R@5 on SciFact, -.007 on HotpotQA."
    )
    class_alphas: dict[str, float] = _setting(
        {}, "Dense weight per query class (term-heavy, semantic, mixed); empty = the measured defaults."
    )
    query2doc: bool = _setting(
        False, "Gated Query2Doc: an LLM pseudo document appended to the query when the first pass is weak."
    )
    hyde: bool = _setting(
        False, "Gated HyDE: search with the question's vector plus a hypothetical passage's when the first pass "
        "is weak.",
    )
    expansion_gate: float = _setting(
        0.83, "Query2Doc / HyDE run when the first pass's best dense cosine is below this (or a regrade failed)."
    )
    expansion_model: str = _setting("", "Chat model writing Query2Doc / HyDE passages; empty = chat_model.")
    metadata_boost: dict[str, Any] = _setting(
        {}, "Boost chunks whose metadata matches, e.g. {\"category\": {\"prefix\": \"cs.\"}, "
        "\"date\": {\"gte\": \"2020\"}}; same syntax as filters."
    )
    metadata_boost_weight: float = _setting(
        0.3, "A chunk's score is multiplied by 1 + this for each boost spec it matches (unless the spec has a weight)."
    )
    category_boost: bool = _setting(
        False, "Predict the question's category from the corpus' own metadata and boost it when confident."
    )
    category_key: str = _setting("category", "Metadata key holding the category (prefixes count: cs.AI in cs).")
    category_min_confidence: float = _setting(0.5, "Predicted categories below this confidence are not boosted.")
    technique_weight: float = _setting(
        0.1, "Score-fusion weight of each list a technique adds, against 1 for the hybrid list."
    )
    retrieve_k: int = _setting(20, "Passages retrieve hands to rerank.")
    rerank: bool = _setting(True, "Dense rerank of the retrieved pool with the stored chunk vectors.")
    rerank_k: int = _setting(5, "Passages kept after rerank (what grade sees).")
    rerank_fused_weight: float = _setting(
        0.05,
        "Weight of the min-max normalized fusion score added to the "
        "dense cosine in rerank (keeps lexical evidence as a tiebreak).",
    )
    cross_encoder: str = _setting(
        "", "Optional cross-encoder for rerank ('cross-encoder:<model or folder>'); empty = off."
    )
    cross_encoder_pool: int = _setting(20, "Most passages the cross-encoder scores.")
    cross_encoder_threshold: float = _setting(
        -0.5, "Passages the cross-encoder scores below this are dropped."
    )
    # ---- grade ---------------------------------------------------------------------------------------------
    upper: float = _setting(0.2, "CRAG upper threshold: any passage scoring above it -> correct.")
    lower: float = _setting(-0.5, "CRAG lower threshold: all passages below it -> incorrect.")
    index_thresholds: bool = _setting(
        True,
        "Use the (upper, lower) stored in the index for the evaluator by `cragraph eval evaluator "
        "--store-thresholds`, when there are any, instead of upper/lower.",
    )
    # ---- refine --------------------------------------------------------------------------------------------
    refine: bool = _setting(True, "Split kept passages into knowledge strips and drop the weak ones.")
    strip_min_chars: int = _setting(
        60, "Sentences shorter than this are joined with the next into one strip."
    )
    strip_max_chars: int = _setting(400, "Longest strip; longer sentences stay whole but are not joined.")
    strip_threshold: float = _setting(-0.5, "Strips scoring below this are dropped.")
    # ---- web -----------------------------------------------------------------------------------------------
    web_search: bool = _setting(True, "Search the web (Tavily; needs TAVILY_API_KEY) on ambiguous/incorrect.")
    web_max_results: int = _setting(5, "Most web results turned into passages.")
    web_timeout_s: float = _setting(10.0, "Seconds before a web search counts as failed.")
    web_base_url: str = _setting("", "Tavily API base URL; empty = https://api.tavily.com.")
    web_search_depth: str = _setting("basic", "Tavily search depth: basic or advanced.")
    llm_web_query: bool = _setting(False, "Let the chat model write the web query (else a keyword rule).")
    # ---- select --------------------------------------------------------------------------------------------
    select_alpha: float = _setting(0.5, "a in coverage(C) = a*cos(q, mean(C)) + (1-a)*max cos(q, c).")
    select_min_gain: float = _setting(0.002, "Selection stops when the best marginal coverage gain is below.")
    context_budget_chars: int = _setting(2400, "Most characters of context handed to the answer.")
    # ---- highlight (nodes/highlight.py, between select and answer) -----------------------------------------
    highlight: bool = _setting(
        True, "Score each selected passage's sentences against the question (and sub-questions) and return "
        "the best as `highlights` with passage ids and character offsets."
    )
    highlight_per_passage: int = _setting(2, "Most evidence sentences kept per passage.")
    highlight_total: int = _setting(8, "Most evidence sentences kept over the whole context.")
    highlight_min_score: float = _setting(
        -0.5, "Sentences scoring below this (evaluator scale, -1..1) are never highlighted."
    )
    compress_context: bool = _setting(
        False, "Hand the answer only the highlighted sentences of each passage (in document order; a passage "
        "without any keeps its best one); the trace reports the characters saved."
    )
    # ---- answer --------------------------------------------------------------------------------------------
    llm_answer: bool = _setting(
        False,
        "Write the answer with the chat model (validated JSON with citations); "
        "off = extractive answer from the best evidence sentences.",
    )
    answer_sentences: int = _setting(2, "Evidence sentences in an extractive answer.")
    answer_min_score: float = _setting(-0.2, "Abstain when no evidence sentence scores at least this.")
    answer_max_new_tokens: int = _setting(200, "Generation cap for the LLM answer.")
    # ---- multi-hop planning (graph/multihop.py) -------------------------------------------------------------
    multihop: str = _setting(
        "auto",
        "Route to the multi-hop planner: auto (when the rule decomposer finds a bridge or comparison "
        "structure), always, or never.",
    )
    llm_route: bool = _setting(
        False, "With multihop=auto, let the chat model classify single vs multi-hop (invalid output: rules decide)."
    )
    route_model: str = _setting("", "Chat model for the route classifier; empty = chat_model.")
    multihop_llm_decompose: bool = _setting(
        False, "Ask the chat model for the sub-question DAG (the embedded 135M model rarely gives a valid one)."
    )
    multihop_decompose_model: str = _setting("", "Chat model for the planner's LLM steps; empty = chat_model.")
    multihop_llm_compile: bool = _setting(
        False, "Let the chat model compile the plan (validated; the deterministic compiler is the fallback)."
    )
    multihop_llm_extract: bool = _setting(False, "EXTRACT_ANSWER through the chat model, else extractive.")
    multihop_llm_synthesize: bool = _setting(False, "SYNTHESIZE a draft answer with the chat model.")
    multihop_rule_decompose: bool = _setting(True, "Rule-based bridge / comparison decomposition as a fallback.")
    multihop_bridge: bool = _setting(
        True, "Entity bridge: titles and entities of the question's top passages become hop-2 queries."
    )
    multihop_question_top_k: int = _setting(10, "Passages retrieved for the whole question.")
    multihop_sub_top_k: int = _setting(8, "Passages retrieved per sub-question.")
    multihop_slot_candidates: int = _setting(2, "Values extracted per slot and substituted into later hops.")
    multihop_bridge_from_top: int = _setting(3, "Top passages the bridge takes entity candidates from.")
    multihop_bridge_entities: int = _setting(5, "Entity candidates the bridge retrieves for.")
    multihop_bridge_top_k: int = _setting(4, "Passages retrieved per bridge entity.")
    multihop_bridge_template: str = _setting(
        "{entity} {question}", "Hop-2 query per bridge entity; {question} is the question."
    )
    multihop_question_weight: float = _setting(1.0, "Weight of the question's own hits when merging evidence.")
    multihop_sub_weight: float = _setting(1.0, "Weight of sub-question hits when merging evidence.")
    multihop_bridge_weight: float = _setting(1.0, "Weight of bridge hits when merging evidence.")
    multihop_max_evidence: int = _setting(10, "Evidence passages the plan hands to selection.")
    multihop_filter_threshold: float = _setting(
        -2.0, "FILTER_CE threshold after each sub-question retrieval; below -1 switches the filter off."
    )
    multihop_grade_steps: bool = _setting(False, "Record a CRAG grade per retrieval step in the trace.")
    multihop_max_sub_questions: int = _setting(5, "Largest DAG the validator accepts.")
    multihop_max_deps: int = _setting(2, "Most dependencies per sub-question.")
    multihop_max_top_k: int = _setting(20, "Clamp for any step's top_k.")
    multihop_max_fanout: int = _setting(5, "Clamp for MAP_RETRIEVE fan-out.")
    multihop_max_entities: int = _setting(8, "Clamp for EXTRACT_ENTITIES.")
    # ---- loops and debugging -------------------------------------------------------------------------------
    max_retrieval_rounds: int = _setting(
        1,
        "Re-retrievals with a rewritten query when grading says incorrect "
        "and the web cannot help (0 = abstain at once).",
    )
    debug: bool = _setting(False, "Keep intermediate passages of every stage in the output's `debug`.")

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for item in fields(self):
            if not item.init:
                continue
            raw = os.environ.get(ENV_PREFIX + item.name.upper())
            if raw is None or getattr(self, item.name) != _default_of(item):
                continue
            setattr(self, item.name, parse_setting(raw, hints[item.name], item.name))

    def model_for(self, stage_model: str) -> str:
        """The chat model spec a stage uses: its own if set, else `chat_model`."""
        return stage_model or self.chat_model


def _default_of(item: Any) -> Any:
    return item.default_factory() if callable(item.default_factory) else item.default


def parse_setting(raw: str, kind: Any, name: str) -> Any:
    text = raw.strip()
    if kind is bool:
        if text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r}: expected true/false")
    if kind is int:
        return int(text)
    if kind is float:
        return float(text)
    if kind is str:
        return raw
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"{ENV_PREFIX}{name.upper()} must be a JSON object")
    return value
