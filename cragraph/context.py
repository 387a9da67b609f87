"""Runtime settings of the agent (LangGraph `context_schema`): shown and edited in Studio, overridable by env.

Every field still at its default is overridden by the environment variable CRAGRAPH_<FIELD NAME IN CAPITALS>
(e.g. CRAGRAPH_INDEX, CRAGRAPH_CHAT_MODEL, CRAGRAPH_WEB_SEARCH=false), as langchain-ai's react-agent template
does, so a server started with env vars and a `graph.invoke` without context agree. Values given explicitly
win over the environment.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args, get_origin, get_type_hints

from cragraph.knowledge.strips import StripSettings
from cragraph.planning.settings import PREFIX as MULTIHOP_PREFIX
from cragraph.planning.settings import MultihopSettings
from cragraph.retrieval.graph_walk import GraphSettings
from cragraph.retrieval.retriever import Fusion, Mode, RetrievalSettings
from cragraph.retrieval.techniques import Techniques
from cragraph.settings import default_of, mirrored, model_setting
from cragraph.settings import setting as _setting

ENV_PREFIX = "CRAGRAPH_"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

# The stage settings Context mirrors, with the prefix of their fields here: `section(kind, context, prefix)`
# builds each back (tests check that every field is mirrored with the same default).
SECTIONS: tuple[tuple[type, str], ...] = (
    (RetrievalSettings, "retrieval_"),
    (GraphSettings, "graph_"),
    (Techniques, ""),
    (StripSettings, "strip_"),
    (MultihopSettings, MULTIHOP_PREFIX),
)


@dataclass(kw_only=True)
class Context:
    """Settings for one run of the CRAG graph. Defaults suit the embedded offline models on a small CPU."""

    # ---- index and models ----------------------------------------------------------------------------------
    index: str = _setting(
        ".cragraph/index", "Folder of the index bundle to answer from (cragraph index ...)."
    )
    index_backend: Literal["bundle", "milvus"] = _setting(
        "bundle",
        "Where the index lives: 'bundle' (the folder `index`) or 'milvus' (a Milvus collection at `index_uri`, "
        "built with cragraph index --backend milvus).",
    )
    index_uri: str = _setting(
        "",
        "The Milvus index when index_backend is 'milvus': a Milvus Lite file (FILE.db) or a Milvus server "
        "(http://host:19530).",
    )
    embedder: str = _setting(
        "",
        "Embedding model; empty = the one the index was built with. A different "
        "name is refused, since its vectors would not be comparable.",
    )
    evaluator: str = _setting(
        "embedded",
        "Relevance evaluator for grading, strip refinement and evidence: 'embedded' (the trained e5-small "
        "head shipped in evaluators/weights), 'cosine' (calibrated similarity on the index's embedder), "
        "'t5:<model>', 'cross-encoder:<model>', 'llm:<provider:model>'. upper/lower are on its scale.",
    )
    chat_model: str = model_setting(
        "embedded",
        "Chat model for every LLM stage unless a stage names its own: "
        "'embedded' (SmolLM2-135M, offline) or 'provider:model'.",
    )
    rewrite_model: str = model_setting(
        "", "Chat model for query rewrites (understand, re-retrieve); empty = chat_model."
    )
    web_query_model: str = model_setting(
        "", "Chat model that turns the question into a web query; empty = chat_model."
    )
    answer_model: str = model_setting("", "Chat model that writes the answer; empty = chat_model.")
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
    retrieval_mode: Mode = mirrored(RetrievalSettings, "mode")
    retrieval_pool: int = mirrored(RetrievalSettings, "pool")
    retrieval_fusion: Fusion = mirrored(RetrievalSettings, "fusion")
    retrieval_alpha: float = mirrored(RetrievalSettings, "alpha")
    retrieval_alpha_peaked: float = mirrored(RetrievalSettings, "alpha_peaked")
    retrieval_alpha_flat: float = mirrored(RetrievalSettings, "alpha_flat")
    retrieval_peak_gap: float = mirrored(RetrievalSettings, "peak_gap")
    retrieval_rrf_k: int = mirrored(RetrievalSettings, "rrf_k")
    retrieval_dense_weight: float = mirrored(RetrievalSettings, "dense_weight")
    retrieval_bm25_weight: float = mirrored(RetrievalSettings, "bm25_weight")
    retrieval_max_query_chars: int = mirrored(RetrievalSettings, "max_query_chars")
    graph_damping: float = mirrored(GraphSettings, "damping")
    graph_seed_passages: int = mirrored(GraphSettings, "seed_passages")
    graph_second_hop: bool = mirrored(GraphSettings, "second_hop")
    # ---- retrieval techniques (cragraph.retrieval.techniques) --------------------------------------------------
    strategy: Literal["manual", "auto"] = _setting(
        "manual",
        "manual: the technique switches below; auto: a strategy chosen per question from its features "
        "(what `cragraph recommend` shows), with a confidence and a reason in the trace and the output.",
    )
    latency_budget_ms: float = _setting(
        0.0,
        "Per-question retrieval budget; 0 = none. Tight: BM25 only; medium: hybrid and cheap expansions; "
        "loose: everything incl. rerank and LLM expansions. Chosen from latencies measured in this process.",
    )
    entity_retrieval: bool = mirrored(Techniques, "entity_retrieval")
    multi_query: bool = mirrored(Techniques, "multi_query")
    multi_query_max: int = mirrored(Techniques, "multi_query_max")
    prf: bool = mirrored(Techniques, "prf")
    prf_docs: int = mirrored(Techniques, "prf_docs")
    prf_terms: int = mirrored(Techniques, "prf_terms")
    prf_original_weight: float = mirrored(Techniques, "prf_original_weight")
    query_class_alpha: bool = mirrored(Techniques, "query_class_alpha")
    class_alphas: dict[str, float] = mirrored(Techniques, "class_alphas")
    query2doc: bool = mirrored(Techniques, "query2doc")
    hyde: bool = mirrored(Techniques, "hyde")
    expansion_gate: float = mirrored(Techniques, "expansion_gate")
    expansion_model: str = model_setting("", "Chat model writing Query2Doc / HyDE passages; empty = chat_model.")
    metadata_boost: dict[str, Any] = mirrored(Techniques, "metadata_boost")
    metadata_boost_weight: float = mirrored(Techniques, "metadata_boost_weight")
    category_boost: bool = mirrored(Techniques, "category_boost")
    category_key: str = mirrored(Techniques, "category_key")
    category_min_confidence: float = mirrored(Techniques, "category_min_confidence")
    technique_weight: float = mirrored(Techniques, "technique_weight")
    graph_walk: bool = mirrored(Techniques, "graph_walk")
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
    upper: float = _setting(
        0.5, "CRAG upper threshold: any passage scoring above it -> correct (chosen with the default evaluator by "
        "the truthfulness score on training data; see README)."
    )
    lower: float = _setting(
        -0.9, "CRAG lower threshold: all passages below it -> incorrect; passages at or above it are refined (chosen "
        "on training data by the truthfulness score and the answers right; see README)."
    )
    index_thresholds: bool = _setting(
        True,
        "Use the (upper, lower) stored in the index for the evaluator by `cragraph eval evaluator "
        "--store-thresholds`, when there are any, instead of upper/lower.",
    )
    # ---- refine --------------------------------------------------------------------------------------------
    refine: bool = _setting(
        True, "Split kept passages into knowledge strips scored against the question (the evidence)."
    )
    refine_min_passages: int = _setting(
        2, "For a multi-hop-shaped question (a bridge or comparison), refine at least this many passages, the best "
        "graded, even below `lower` (with a correct or ambiguous verdict; web results too): its second hop scores "
        "low against the question itself."
    )
    strip_min_chars: int = mirrored(StripSettings, "min_chars")
    strip_max_chars: int = mirrored(StripSettings, "max_chars")
    # ---- web -----------------------------------------------------------------------------------------------
    web_search: bool = _setting(True, "Search the web (Tavily; needs TAVILY_API_KEY) on ambiguous/incorrect.")
    web_max_results: int = _setting(5, "Most web results turned into passages.")
    web_timeout_s: float = _setting(10.0, "Seconds before a web search counts as failed.")
    web_base_url: str = _setting("", "Tavily API base URL; empty = https://api.tavily.com.")
    web_search_depth: Literal["basic", "advanced"] = _setting("basic", "Tavily search depth: basic or advanced.")
    llm_web_query: bool = _setting(False, "Let the chat model write the web query (else a keyword rule).")
    # ---- select --------------------------------------------------------------------------------------------
    select_alpha: float = _setting(0.5, "a in coverage(C) = a*cos(q, mean(C)) + (1-a)*max cos(q, c).")
    context_budget_chars: int = _setting(2400, "Most characters of context handed to the answer.")
    # ---- highlight (nodes/highlight.py, between select and answer) -----------------------------------------
    highlight: bool = _setting(
        True, "Score each selected passage's sentences against the question (and sub-questions) and return "
        "the best as `highlights` with passage ids and character offsets."
    )
    highlight_per_passage: int = _setting(2, "Most evidence sentences kept per passage.")
    highlight_total: int = _setting(8, "Most evidence sentences kept over the whole context.")
    compress_context: bool = _setting(
        False, "Hand the answer only the highlighted sentences of each passage (in document order; a passage "
        "without any keeps its best one); the trace reports the characters saved."
    )
    # ---- answer --------------------------------------------------------------------------------------------
    llm_answer: bool = _setting(
        False,
        "Write the answer with the chat model (validated JSON with citations); "
        "off = the short-answer reader's span from the selected passages.",
    )
    answer_sentences: int = _setting(2, "Evidence sentences shown with a reader answer.")
    reader_path: str = _setting(
        "", "Folder of the short-answer reader's weights (reader.npz + config.json); empty = the packaged ones."
    )
    answer_threshold: float = _setting(
        0.5,
        "Answer when the best candidate's probability of being right (one calibrated model over every reading's "
        "signals) reaches this, else abstain and show it held back. Lower gives more answers and more wrong "
        "ones; 0.5 is where a wrong answer costs what a right one earns. 0..1.",
    )
    answer_max_new_tokens: int = _setting(200, "Generation cap for the LLM answer.")
    # ---- multi-hop planning (graph/multihop.py) -------------------------------------------------------------
    multihop: Literal["auto", "always", "never"] = _setting(
        "auto",
        "Route to the multi-hop planner: auto (when the rule decomposer finds a bridge or comparison "
        "structure), always, or never.",
    )
    llm_route: bool = _setting(
        False, "With multihop=auto, let the chat model classify single vs multi-hop (invalid output: rules decide)."
    )
    route_model: str = model_setting("", "Chat model for the route classifier; empty = chat_model.")
    multihop_llm_decompose: bool = mirrored(MultihopSettings, "llm_decompose")
    multihop_decompose_model: str = mirrored(MultihopSettings, "decompose_model")
    multihop_llm_compile: bool = mirrored(MultihopSettings, "llm_compile")
    multihop_llm_extract: bool = mirrored(MultihopSettings, "llm_extract")
    multihop_llm_synthesize: bool = mirrored(MultihopSettings, "llm_synthesize")
    multihop_rule_decompose: bool = mirrored(MultihopSettings, "rule_decompose")
    multihop_bridge: bool = mirrored(MultihopSettings, "bridge")
    multihop_question_top_k: int = mirrored(MultihopSettings, "question_top_k")
    multihop_sub_top_k: int = mirrored(MultihopSettings, "sub_top_k")
    multihop_slot_candidates: int = mirrored(MultihopSettings, "slot_candidates")
    multihop_bridge_from_top: int = mirrored(MultihopSettings, "bridge_from_top")
    multihop_bridge_entities: int = mirrored(MultihopSettings, "bridge_entities")
    multihop_bridge_top_k: int = mirrored(MultihopSettings, "bridge_top_k")
    multihop_bridge_template: str = mirrored(MultihopSettings, "bridge_template")
    multihop_question_weight: float = mirrored(MultihopSettings, "question_weight")
    multihop_sub_weight: float = mirrored(MultihopSettings, "sub_weight")
    multihop_bridge_weight: float = mirrored(MultihopSettings, "bridge_weight")
    multihop_max_evidence: int = mirrored(MultihopSettings, "max_evidence")
    multihop_graph_expand: bool = mirrored(MultihopSettings, "graph_expand")
    multihop_max_sub_questions: int = mirrored(MultihopSettings, "max_sub_questions")
    multihop_max_deps: int = mirrored(MultihopSettings, "max_deps")
    multihop_max_top_k: int = mirrored(MultihopSettings, "max_top_k")
    multihop_max_fanout: int = mirrored(MultihopSettings, "max_fanout")
    multihop_max_entities: int = mirrored(MultihopSettings, "max_entities")
    # ---- loops and debugging -------------------------------------------------------------------------------
    max_retrieval_rounds: int = _setting(
        1,
        "Re-retrievals with a rewritten query when grading says incorrect "
        "and the web cannot help (0 = abstain at once).",
    )
    debug: bool = _setting(False, "Keep intermediate passages of every stage in the output's `debug`.")
    # ---- chat and human review (nodes/conversation.py, nodes/review.py) ------------------------------------
    llm_followup: bool = _setting(
        False,
        "On a thread, let the chat model (rewrite_model) rewrite a follow-up ('and where was he born?') as a "
        "standalone question (validated; the rule rewrite when it fails). Off: the rule resolves pronouns and "
        "'and ...' questions against the previous turn.",
    )
    review: Literal["off", "before_web", "before_answer"] = _setting(
        "off",
        "Human review: pause the run with interrupt() before a web search (resume with action approve, skip or "
        "reject) or before the answer is given (approve, edit with an answer, or reject). Needs a checkpointer "
        "(the server has one; in Python compile with one and pass a thread_id).",
    )

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for item in fields(self):
            if not item.init:
                continue
            raw = os.environ.get(ENV_PREFIX + item.name.upper())
            if raw is not None and getattr(self, item.name) == default_of(item):
                setattr(self, item.name, parse_setting(raw, hints[item.name], item.name))
            allowed = get_args(hints[item.name]) if get_origin(hints[item.name]) is Literal else ()
            if allowed and getattr(self, item.name) not in allowed:
                raise ValueError(f"Context.{item.name} must be one of {', '.join(map(repr, allowed))}, "
                                 f"not {getattr(self, item.name)!r}")
        threshold = self.answer_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
            raise ValueError(f"Context.answer_threshold is a probability, 0..1, not {threshold!r}")

    def model_for(self, stage_model: str) -> str:
        """The chat model spec a stage uses: its own if set, else `chat_model`."""
        return stage_model or self.chat_model


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
    if kind is str or get_origin(kind) is Literal:
        return raw
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"{ENV_PREFIX}{name.upper()} must be a JSON object")
    return value
