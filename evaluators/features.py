"""Relevance features of (question, candidate list) pairs for the embedded evaluator's trained head.

Why these: a transformer pass per passage (cross-encoder, contextual late interaction) costs 0.2-0.4 s per
passage on a busy 2-core CPU, while indexed passages already have their e5 vectors in the embedding cache. So
every feature here is either free given the cached vectors or a few numpy operations:

- absolute signals (they say "nothing here is relevant" when nothing is): e5 cosine, query-term coverage,
  coverage and BM25 weighted by a corpus-free rarity (the passage list is no corpus to take an IDF from, but
  e5's SentencePiece ids run from frequent to rare pieces), static-token MaxSim (e5's input word-piece
  embeddings: soft lexical matching that survives inflection);
- list-relative signals (how a passage compares with the other candidates): cosine and BM25 minus the list's
  best, cosine rank;
- multi-hop signals: a passage whose lead (the title before the first ". ") appears in the question, or in
  another strongly matching candidate, is likely the second hop of a bridge question even when its own
  cosine to the question is low.

`list_features` returns one row per passage in FEATURE_NAMES order; the head standardizes them itself.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from stores.tokenize import tokenize

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

FEATURE_VERSION = 3
FEATURE_NAMES = (
    "cos",                # e5 cosine(query, passage)
    "cos_gap_max",        # cos - best cos in the list
    "cos_gap_mean",       # cos - mean cos of the list
    "cos_rank",           # rank of cos in the list, 0 best, scaled to [0, 1]
    "coverage",           # share of the question's distinct terms found in the passage
    "bm25_local",         # log(1 + BM25) with the candidate list as the collection (absolute-ish)
    "bm25_rel",           # bm25_local / best bm25_local in the list
    "rare_coverage",      # coverage with each question term weighted by its rarity (see `term_rarity`)
    "rare_bm25",          # log(1 + BM25 with term rarity as IDF): corpus-free and absolute
    "maxsim_mean",        # static-token MaxSim: mean over question pieces of the best passage piece
    "maxsim_min",         # ... the worst-matched question piece
    "maxsim_q25",         # ... 25th percentile
    "exact_piece_share",  # share of question pieces found verbatim among the passage pieces
    "rare_exact_share",   # the same, each piece weighted by its rarity (see `rarity`)
    "rare_maxsim",        # MaxSim mean weighted by rarity
    "rarest3_share",      # share of the question's three rarest pieces found verbatim
    "lead_in_question",   # share of the passage's lead (title) terms found in the question
    "lead_linked",        # best over other candidates j of (share of lead terms in j) * cos_j
    "lead_linked_gap",    # lead_linked - best cos in the list
    "neighbour_cos",      # best cosine between this passage and another candidate
    "log_terms",          # log(1 + number of passage terms)
)
N_FEATURES = len(FEATURE_NAMES)

_LEAD_MAX_CHARS = 100
_WORDISH = re.compile(r"[^\W_]")
_BM25_K1, _BM25_B = 1.2, 0.75


@dataclass
class StaticPieces:
    """e5's tokenizer and input word-piece table: token-level matching without running the transformer."""

    tokenizer: Any  # the model's Hugging Face tokenizer
    table: np.ndarray  # (vocab, dim) float32, rows L2-normalized lazily by `vectors`
    skip_ids: frozenset[int]
    word_piece: np.ndarray  # (vocab,) bool: the piece holds a letter or digit (punctuation pieces are skipped)
    max_pieces: int = 512
    rarity_memo: dict[str, float] = field(default_factory=dict, repr=False)

    @classmethod
    def from_sentence_transformer(cls, model: SentenceTransformer) -> StaticPieces:
        transformer: Any = model[0]  # sentence-transformers' Transformer module (its attributes vary by version)
        auto_model = getattr(transformer, "auto_model", None) or transformer.model
        table = auto_model.get_input_embeddings().weight.detach().float().numpy()
        return cls.from_parts(transformer.tokenizer, table)

    @classmethod
    def from_parts(cls, tokenizer: Any, table: np.ndarray) -> StaticPieces:
        """From a Hugging Face tokenizer and the model's input word-piece table (vocab, dim)."""
        skip = set(tokenizer.all_special_ids)
        for piece in ("▁", "query", "▁query", ":", "passage", "▁passage"):
            piece_id = tokenizer.convert_tokens_to_ids(piece)
            if isinstance(piece_id, int) and piece_id != tokenizer.unk_token_id:
                skip.add(piece_id)
        tokens = tokenizer.convert_ids_to_tokens(list(range(table.shape[0])))
        word_piece = np.array([bool(t) and bool(_WORDISH.search(t)) for t in tokens], dtype=bool)
        return cls(tokenizer=tokenizer, table=table, skip_ids=frozenset(skip), word_piece=word_piece)

    def piece_ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False, truncation=True, max_length=self.max_pieces)["input_ids"]
        return [i for i in ids if i not in self.skip_ids and i < len(self.word_piece) and self.word_piece[i]]

    def term_rarity(self, term: str) -> float:
        """A BM25 term's rarity: the mean `rarity` of its word pieces (memoized per term)."""
        cache = self.rarity_memo
        value = cache.get(term)
        if value is None:
            ids = self.piece_ids(term)
            value = float(rarity(ids).mean()) if ids else 0.0
            if len(cache) < 200_000:
                cache[term] = value
        return value

    def vectors(self, ids: Sequence[int]) -> np.ndarray:
        rows = self.table[np.asarray(ids, dtype=np.int64)]
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-8)


def passage_lead(passage: str) -> str:
    """The title part of a `title. text` passage (what Chunk.passage builds), or "" when there is none."""
    head, sep, _ = passage.partition(". ")
    return head if sep and len(head) <= _LEAD_MAX_CHARS else ""


def share_in(terms: Sequence[str], container: set[str]) -> float:
    """Share of distinct `terms` found in `container`; 0 when there are no terms."""
    unique = set(terms)
    return sum(t in container for t in unique) / len(unique) if unique else 0.0


def local_bm25(query_terms: Sequence[str], passages_terms: Sequence[Sequence[str]]) -> np.ndarray:
    """BM25 of each passage with the candidate list itself as the collection (IDF over the list, +1 smoothing)."""
    n = len(passages_terms)
    counts = [Counter(terms) for terms in passages_terms]
    lengths = np.array([len(terms) for terms in passages_terms], dtype=np.float64)
    avg = max(lengths.mean(), 1.0) if n else 1.0
    scores = np.zeros(n)
    for term in set(query_terms):
        df = sum(term in c for c in counts)
        if not df:
            continue
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        tf = np.array([c.get(term, 0) for c in counts], dtype=np.float64)
        scores += idf * tf * (_BM25_K1 + 1) / (tf + _BM25_K1 * (1 - _BM25_B + _BM25_B * lengths / avg))
    return scores


def rarity(piece_ids: Sequence[int]) -> np.ndarray:
    """log(2 + id): e5's SentencePiece vocabulary is ordered from frequent to rare pieces, so a piece's id is
    a corpus-free, language-independent IDF proxy ("the" is 70, "Kawa" 105221)."""
    return np.log(2.0 + np.asarray(piece_ids, dtype=np.float64))


def rarity_bm25(query_terms: Sequence[str], passages_terms: Sequence[Sequence[str]],
                weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """(rarity-weighted coverage, BM25 with rarity as IDF) per passage; lengths normalized over the list."""
    unique = [t for t in dict.fromkeys(query_terms) if weights.get(t, 0.0) > 0]
    total = sum(weights[t] for t in unique)
    lengths = np.array([len(terms) for terms in passages_terms], dtype=np.float64)
    avg = max(lengths.mean(), 1.0) if len(lengths) else 1.0
    coverage, bm25 = np.zeros(len(passages_terms)), np.zeros(len(passages_terms))
    for index, terms in enumerate(passages_terms):
        counts = Counter(terms)
        norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * lengths[index] / avg)
        for term in unique:
            tf = counts.get(term, 0)
            if tf:
                coverage[index] += weights[term]
                bm25[index] += weights[term] * tf * (_BM25_K1 + 1) / (tf + norm)
    return (coverage / total if total else coverage), bm25


def maxsim_stats(query_vecs: np.ndarray, query_ids: Sequence[int], passage_vecs: np.ndarray,
                 passage_ids: Sequence[int]) -> tuple[float, ...]:
    """Each query piece's best cosine to a passage piece, summarized: (mean, min, 25th percentile, share
    present verbatim, rarity-weighted share present, rarity-weighted mean, share of the 3 rarest present)."""
    if not len(query_ids) or not len(passage_ids):
        return (0.0,) * 7
    best = (query_vecs @ passage_vecs.T).max(axis=1)
    present = set(passage_ids)
    found = np.array([i in present for i in query_ids], dtype=np.float64)
    weight = rarity(query_ids)
    rarest = np.argsort(-weight, kind="stable")[:3]
    return (float(best.mean()), float(best.min()), float(np.percentile(best, 25)), float(found.mean()),
            float((found * weight).sum() / weight.sum()), float((best * weight).sum() / weight.sum()),
            float(found[rarest].mean()))


def list_features(question: str, passages: Sequence[str], query_vec: np.ndarray, passage_vecs: np.ndarray,
                  pieces: StaticPieces) -> np.ndarray:
    """Feature rows (len(passages), N_FEATURES) for one question's candidate list, in FEATURE_NAMES order.

    query_vec and passage_vecs are the embedder's L2-normalized vectors (passage vectors as the index stores
    them). List-relative features are computed over exactly the passages given.
    """
    n = len(passages)
    out = np.zeros((n, N_FEATURES), dtype=np.float32)
    if n == 0:
        return out
    cos = passage_vecs @ query_vec
    q_terms = tokenize(question)
    q_term_set = set(q_terms)
    p_terms = [tokenize(p) for p in passages]
    p_term_sets = [set(t) for t in p_terms]
    bm25 = local_bm25(q_terms, p_terms)
    rare_cov, rare_bm25 = rarity_bm25(q_terms, p_terms, {t: pieces.term_rarity(t) for t in q_term_set})
    q_ids = pieces.piece_ids(question)
    q_vecs = pieces.vectors(q_ids) if q_ids else np.zeros((0, pieces.table.shape[1]), dtype=np.float32)
    lead_terms = [tokenize(passage_lead(p)) for p in passages]
    pair_cos = passage_vecs @ passage_vecs.T
    np.fill_diagonal(pair_cos, -1.0)
    order = np.argsort(-cos, kind="stable")
    ranks = np.empty(n)
    ranks[order] = np.arange(n)
    best_cos, mean_cos, best_bm25 = float(cos.max()), float(cos.mean()), float(bm25.max())
    for i, passage in enumerate(passages):
        p_ids = pieces.piece_ids(passage)
        p_vecs = pieces.vectors(p_ids) if p_ids else q_vecs[:0]
        piece_stats = maxsim_stats(q_vecs, q_ids, p_vecs, p_ids)
        linked = max((share_in(lead_terms[i], p_term_sets[j]) * float(cos[j]) for j in range(n) if j != i),
                     default=0.0)
        out[i] = (
            cos[i], cos[i] - best_cos, cos[i] - mean_cos, ranks[i] / max(n - 1, 1),
            share_in(q_terms, p_term_sets[i]), math.log1p(bm25[i]), bm25[i] / best_bm25 if best_bm25 > 0 else 0.0,
            rare_cov[i], math.log1p(rare_bm25[i]), *piece_stats,
            share_in(lead_terms[i], q_term_set), linked, linked - best_cos if linked else -1.0,
            float(pair_cos[i].max()) if n > 1 else 0.0, math.log1p(len(p_terms[i])),
        )
    return out
