"""The operator settings of the graph's own nodes (understand, rerank, grade, refine, web, select, highlight,
answer, route) and the stage chat models. Library stages declare theirs beside their code (RetrievalSettings,
Techniques, GraphSettings, StripSettings, MultihopSettings); `rag.config.Operator` gathers both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rag.settings import model_setting, setting


@dataclass
class UnderstandSettings:
    """Query variants made before retrieval."""

    llm_rewrites: bool = setting(
        False, "Ask the chat model for query variants (off by default: the embedded 135M model rewrites poorly).")
    max_rewrites: int = setting(3, "Most LLM query variants kept.")
    rewrite_min_cosine: float = setting(
        0.85, "An LLM variant is kept only if its embedder cosine to the question is at least this: higher keeps "
        "only close paraphrases.")
    keyword_variant: bool = setting(True, "Add a rule-based keyword-only variant of the question.")


@dataclass
class RouteSettings:
    llm: bool = setting(
        False, "With multihop=auto, let the chat model classify single vs multi-hop (invalid output: rules decide).")


@dataclass
class RerankSettings:
    """Between retrieve and grade."""

    retrieve_k: int = setting(20, "Passages retrieve hands to rerank.")
    enabled: bool = setting(True, "Dense rerank of the retrieved pool with the stored chunk vectors.")
    k: int = setting(5, "Passages kept after rerank (what grade sees).")
    fused_weight: float = setting(
        0.05, "Weight of the min-max normalized fusion score added to the dense cosine in rerank (keeps lexical "
        "evidence as a tiebreak).")
    cross_encoder: str = setting(
        "", "Optional cross-encoder for rerank ('cross-encoder:<model or folder>'); empty = off.")
    cross_encoder_pool: int = setting(20, "Most passages the cross-encoder scores.")
    cross_encoder_threshold: float = setting(-0.5, "Passages the cross-encoder scores below this are dropped.")


@dataclass
class GradeSettings:
    """The CRAG verdict's thresholds, on the evaluator's scale. Thresholds stored for the index and evaluator
    (`python -m cragraph_lab eval evaluator --store-thresholds`) replace them; grade, refine and the web
    branch read the same."""

    upper: float = setting(
        0.5, "Any passage scoring above it -> correct (chosen with the default evaluator by the truthfulness score "
        "on training data).")
    lower: float = setting(
        -0.9, "All passages below it -> incorrect; passages at or above it are refined (chosen on training data by "
        "the truthfulness score and the answers right).")


@dataclass
class RefineSettings:
    enabled: bool = setting(True, "Split kept passages into knowledge strips scored against the question.")
    min_passages: int = setting(
        2, "For a multi-hop-shaped question (a bridge or comparison), refine at least this many passages, the best "
        "graded, even below `lower`: its second hop scores low against the question itself.")


@dataclass
class WebSettings:
    """Tavily web search (needs TAVILY_API_KEY); the run's `web_search` switches it."""

    max_results: int = setting(5, "Most web results turned into passages.")
    timeout_s: float = setting(10.0, "Seconds before a web search counts as failed.")
    base_url: str = setting("", "Tavily API base URL; empty = https://api.tavily.com.")
    search_depth: Literal["basic", "advanced"] = setting("basic", "Tavily search depth: basic or advanced.")
    llm_query: bool = setting(False, "Let the chat model write the web query (else a keyword rule).")


@dataclass
class SelectSettings:
    alpha: float = setting(0.5, "a in coverage(C) = a*cos(q, mean(C)) + (1-a)*max cos(q, c).")
    budget_chars: int = setting(2400, "Most characters of context handed to the answer.")


@dataclass
class HighlightSettings:
    per_passage: int = setting(2, "Most evidence sentences kept per passage.")
    total: int = setting(8, "Most evidence sentences kept over the whole context.")


@dataclass
class AnswerSettings:
    sentences: int = setting(2, "Evidence sentences shown with a reader answer.")
    max_new_tokens: int = setting(200, "Generation cap for the LLM answer.")
    reader_path: str = setting(
        "", "Folder of the short-answer reader's weights (reader.npz + config.json); empty = the packaged ones.")


@dataclass
class ModelSettings:
    """A stage's own chat model (`provider:model`); empty = the run's chat_model."""

    rewrite: str = model_setting("", "Chat model for query rewrites and follow-ups.")
    route: str = model_setting("", "Chat model for the route classifier.")
    web_query: str = model_setting("", "Chat model that turns the question into a web query.")
    expansion: str = model_setting("", "Chat model writing Query2Doc / HyDE passages.")
    answer: str = model_setting("", "Chat model that writes the answer (llm_answer).")
