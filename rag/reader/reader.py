"""The reader: `load_reader().read(question, passages, language)`.

Pipeline per question: pick the best sentences of the passages under a token budget (window), encode
("query: " + question, context) with e5-small (its frozen bottom layers, the reader's own fine-tuned top layers),
point at the best start / end, and map the span back to its passage. The encoder runs on the reader's backend
(CRAGRAPH_READER_BACKEND): the exported graph on OpenVINO / ONNX Runtime (rag/reader/graph.py), or torch
(rag/reader/encoder.py); each runs e5's fp32 bottom (rag/reader/encoder.py says why). It gives spans
and scores only: yes / no and "A or B" questions are answered by the rule readings (rag/answering/rules),
which call it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from rag.reader.decode import best_spans, clean_span
from rag.reader.folding import as_written, fold
from rag.reader.graph import GRAPH_RUNTIMES, WEIGHTS_FILE, GraphSpans, reader_backend
from rag.reader.inputs import Scored, encode
from rag.reader.rerank import FEATURES, rerank
from rag.reader.types import Passage, ReaderAnswer, ReaderWeightsError
from rag.reader.weights_folder import read_folder
from rag.reader.window import ReadContext, build_context
from stores.chinese_script import simplified
from stores.tokenize import tokenize

DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "weights"
CONFIG_FILE = "config.json"
_REQUIRED = ("split", "budget", "max_len", "max_answer_tokens")


def read_weights(folder: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The config and arrays of a weights folder, or a ReaderWeightsError naming the file at fault."""
    config_path = folder / CONFIG_FILE
    config, arrays = read_folder(config_path, folder / WEIGHTS_FILE, _REQUIRED, ReaderWeightsError)
    reranker = config.get("reranker")
    if reranker and (reranker.get("features") != list(FEATURES) or len(reranker.get("weights", ())) != len(FEATURES)):
        raise ReaderWeightsError(config_path, "its re-ranker was fitted on other features than this version's")
    return config, arrays


class Reader:
    """Extractive short-answer reader. Thread-compatible (no per-call state); torch threads are the caller's.

    `spans` maps one input's token ids to its start and end logits (GraphSpans or TorchSpans)."""

    def __init__(self, spans: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], tokenizer: Any,
                 config: dict[str, Any]) -> None:
        self.spans_of = spans
        self.tokenizer = tokenizer
        self.config = config

    @classmethod
    def load(cls, path: str | Path = DEFAULT_WEIGHTS, embedder: str = "e5-small", backend: str | None = None
             ) -> Reader:
        """Weights from `path` (reader.npz + config.json) on `backend` (default: $CRAGRAPH_READER_BACKEND, else
        openvino): openvino / onnx run the exported graph (rag/reader/graph.py), and where it cannot start the
        reader warns and runs on torch; torch runs the same fp32 bottom as the graph."""
        from models.e5_parts import load_tokenizer
        from models.e5_rebuild import ensure_rebuilt_e5_small
        from models.onnx_embedder import BackendStartError, embed_threads

        folder = Path(path)
        config, arrays = read_weights(folder)
        chosen = reader_backend(backend)
        if chosen in GRAPH_RUNTIMES:
            try:
                spans = GraphSpans.open(folder, config, arrays, GRAPH_RUNTIMES[chosen], embed_threads())
                return cls(spans, load_tokenizer(ensure_rebuilt_e5_small()), config)
            except BackendStartError as error:
                warnings.warn(f"{error}; the reader runs on torch", RuntimeWarning, stacklevel=2)
        return cls._on_torch(folder, config, arrays, embedder)

    @classmethod
    def _on_torch(cls, folder: Path, config: dict[str, Any], arrays: dict[str, np.ndarray], embedder: str) -> Reader:
        from models.e5_parts import serves_light
        from models.e5_torch import e5_fp32
        from models.embedder import load_embedder
        from rag.reader.encoder import Bottom, TorchSpans, embedder_bert, load_head

        model = load_embedder(embedder)
        if serves_light(model):  # e5-small on ONNX / OpenVINO: no sentence-transformers
            light = e5_fp32(layers=config["split"])  # the bottom it runs; its own top layers follow
            bert, tokenizer = light.bert, light.tokenizer
        else:  # torch serves it: its fp32 model, as the exported graph reads
            bert, tokenizer = embedder_bert(model.model), model.model.tokenizer
        head = load_head(arrays, config["split"], bert.config, folder / WEIGHTS_FILE)
        return cls(TorchSpans(head, Bottom(bert, config["split"])), tokenizer, config)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.tokenize(text)) if text else 0

    def score(self, question: str, passages: list[Passage], language: str) -> Scored:
        budget = self.config.get("read_budget", self.config["budget"])
        ctx = build_context(question, passages, language, budget, self.count_tokens, self.config.get("hop_weight", 0.0))
        enc = encode(self.tokenizer, question, ctx.text, self.config["max_len"])
        start, end = self.spans_of(enc.input_ids)
        return Scored(ctx, enc, start, end)

    def spans(self, scored: Scored, top: int = 20) -> list[ReaderAnswer]:
        """The `top` best distinct spans, best first, mapped back to their passages."""
        enc, ctx = scored.encoded, scored.context
        found: list[ReaderAnswer] = []
        seen: set[str] = set()
        for s, e, value in best_spans(
            scored.start, scored.end, enc.context_start, enc.context_end, self.config["max_answer_tokens"], top=top * 3
        ):
            answer = self._answer(ctx, int(enc.offsets[s, 0]), int(enc.offsets[e, 1]), value)
            if answer is not None and answer.text.lower() not in seen:
                seen.add(answer.text.lower())
                found.append(answer)
            if len(found) == top:
                break
        return sorted(found, key=lambda a: -a.score)

    def _answer(self, ctx: ReadContext, start: int, end: int, value: float) -> ReaderAnswer | None:
        start, end = clean_span(ctx.text, start, end)
        located = ctx.locate(start, end)
        if end <= start or located is None:  # empty, or across a passage / title boundary
            return None
        segment, source_start, source_end = located
        own = [s for s in ctx.sentences if s.passage == segment.passage]
        if segment.in_title:  # a title span stands for its passage's best sentence
            sentence = max(own, key=lambda s: s.score, default=None)
        else:
            sentence = next((s for s in own if s.start <= source_start < s.end), None)
        # the lexical sentence prior: the question's rarer words usually sit in the answer's sentence
        top = max((s.score for s in ctx.sentences), default=0.0)
        prior = max(sentence.score, 0.0) / top if sentence is not None and top > 0 else 0.0
        return ReaderAnswer(
            ctx.text[start:end],
            "span",
            segment.passage,
            sentence.text if sentence else "",
            source_start,
            source_end,
            value + self.config.get("sentence_weight", 0.0) * prior,
            segment.in_title,
            span_score=value,
            sentence_score=prior,
        )

    def read(self, question: str, passages: list[Passage] | list[str], language: str) -> ReaderAnswer | None:
        """The short answer, or None when the passages or the question are empty or no span is left."""
        return self.read_detailed(question, passages, language)[0]

    def read_detailed(
        self, question: str, passages: list[Passage] | list[str], language: str
    ) -> tuple[ReaderAnswer | None, Scored | None, list[ReaderAnswer]]:
        """read() plus what it was decided from: the encoder's scores and the candidate spans, best first (both
        of the text as read: Chinese folded to simplified; the answer itself is cut from the passage as written)."""
        passages = [p if isinstance(p, Passage) else Passage(str(p)) for p in passages]
        if not any(p.text.strip() for p in passages) or not question.strip():
            return None, None, []
        # the weights know simplified characters; the folded text keeps every offset of the original
        folded = fold(passages, question)
        best, scored, candidates = self._read(simplified(question), folded, language)
        return (None if best is None else as_written(best, passages, folded)), scored, candidates

    def read_ranked(
        self, question: str, passages: list[Passage] | list[str], language: str, top: int = 3
    ) -> list[ReaderAnswer]:
        """read()'s answer and the next best distinct spans (at most `top` in all), each with its own share and
        margin, cut from the passages as written."""
        passages = [p if isinstance(p, Passage) else Passage(str(p)) for p in passages]
        if not any(p.text.strip() for p in passages) or not question.strip():
            return []
        folded = fold(passages, question)
        best, scored, candidates = self._read(simplified(question), folded, language)
        if best is None:
            return []
        ranked = [best]
        if best.confidence is not None and scored is not None:
            ranked += [
                replace(c, confidence=answer_share(candidates, i), margin=no_answer_margin(scored, c))
                for i, c in enumerate(candidates[1:top], start=1)
            ]
        return [as_written(answer, passages, folded) for answer in ranked]

    def _read(
        self, question: str, passages: list[Passage], language: str
    ) -> tuple[ReaderAnswer | None, Scored | None, list[ReaderAnswer]]:
        scored = self.score(question, passages, language)
        candidates = self.spans(scored)
        if self.config.get("skip_in_question", False):
            # a span the question already names is never what it asks for ("Who founded X?" -> not "X")
            asked = set(tokenize(question))
            kept = [c for c in candidates if not set(tokenize(c.text)) <= asked]
            candidates = kept or candidates
        if self.config.get("reranker"):
            candidates = rerank(question, candidates, self.config["reranker"]["weights"])
        if not candidates:
            return None, scored, candidates
        first = candidates[0]
        best = replace(first, confidence=answer_share(candidates), margin=no_answer_margin(scored, first))
        return best, scored, candidates


def answer_share(candidates: list[ReaderAnswer], index: int = 0) -> float:
    """The candidate's (the first by default) softmax share among all, counting the candidates that overlap it in
    the same passage as the same answer: "Caspian Sea", "the Caspian Sea" and "into the Caspian Sea" are one
    answer with three boundaries, not three rivals."""
    shares = np.exp(np.array([c.score for c in candidates]) - max(c.score for c in candidates))
    best = candidates[index]
    same = [_overlaps(best, c) for c in candidates]
    return float(shares[same].sum() / shares.sum())


def no_answer_margin(scored: Scored, answer: ReaderAnswer) -> float:
    """How far the answer's span score stands above the no-answer score (start + end logits at the first token)."""
    return float(answer.span_score - (scored.start[0] + scored.end[0]))


def _overlaps(a: ReaderAnswer, b: ReaderAnswer) -> bool:
    return a.passage == b.passage and a.in_title == b.in_title and a.start < b.end and b.start < a.end
