"""RM3 pseudo-relevance feedback: expansion term weights from the top passages of a first pass.

RM3 (Abdul-Jaleel et al., 2004; as in Anserini): the relevance model P(w|R) is proportional to
sum_d P(w|d) * score(d) over the `docs` best first-pass documents, with P(w|d) = tf(w, d) / |d| (maximum
likelihood over the document's index terms) and score(d) the first-pass scores normalized to sum 1. Its
`terms` heaviest words are kept and renormalized, and the final query model interpolates it with the query's
own model: original_weight * P(w|Q) + (1 - original_weight) * P(w|R). Weights are over index terms (stems,
CJK bigrams), so `BM25Index.search_weighted` scores them directly; they sum to 1.

Stop words never appear (the tokenizer drops them); digits and one-character Latin / Cyrillic terms are
excluded from the feedback model because they match everywhere. Ties are broken by term, so the result is
deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from stores.backend import Lexical
from stores.tokenize import ENGLISH_STOPWORDS, RUSSIAN_STOPWORDS, tokenize


def rm3_expansion(
    query: str,
    first_pass_rows: Sequence[int] | np.ndarray,
    first_pass_scores: Sequence[float] | np.ndarray,
    bm25: Lexical,
    terms: int = 10,
    docs: int = 5,
    original_weight: float = 0.5,
) -> dict[str, float]:
    """Index-term weights of the RM3 query (summing to 1), heaviest first; {} when the query has no terms.

    `first_pass_rows` are the index ids (docstore rows) of the first pass, best first, with their scores.
    """
    if not 0.0 <= original_weight <= 1.0:
        raise ValueError(f"original_weight must be in [0, 1], got {original_weight}")
    query_model = _normalized(Counter(tokenize(query)))
    feedback = feedback_model(first_pass_rows, first_pass_scores, bm25, terms=terms, docs=docs)
    if not feedback:
        return _sorted(query_model)
    if not query_model:
        return _sorted(feedback)
    combined: dict[str, float] = {}
    for term, weight in query_model.items():
        combined[term] = combined.get(term, 0.0) + original_weight * weight
    for term, weight in feedback.items():
        combined[term] = combined.get(term, 0.0) + (1.0 - original_weight) * weight
    return _sorted({term: weight for term, weight in combined.items() if weight > 0})


def feedback_model(
    first_pass_rows: Sequence[int] | np.ndarray,
    first_pass_scores: Sequence[float] | np.ndarray,
    bm25: Lexical,
    terms: int = 10,
    docs: int = 5,
) -> dict[str, float]:
    """P(w|R) over the `terms` heaviest feedback words, renormalized to sum 1 ({} without usable documents)."""
    rows = [int(r) for r in list(first_pass_rows)[:docs]]
    scores = np.asarray(list(first_pass_scores)[: len(rows)], dtype=np.float64)
    if not rows or terms <= 0 or scores.size != len(rows):
        return {}
    scores = np.clip(scores, 0.0, None)
    if scores.sum() <= 0:  # all-zero scores: the documents still count, equally
        scores = np.ones_like(scores)
    scores = scores / scores.sum()
    model: dict[str, float] = {}
    for row, doc_weight in zip(rows, scores.tolist(), strict=True):
        counts = {t: n for t, n in bm25.term_counts(row).items() if _feedback_term(t)}
        length = sum(counts.values())
        if not length or doc_weight <= 0:
            continue
        for term, count in counts.items():
            model[term] = model.get(term, 0.0) + doc_weight * count / length
    kept = sorted(model.items(), key=lambda item: (-item[1], item[0]))[:terms]
    return _normalized(dict(kept))


def _feedback_term(term: str) -> bool:
    if term.isdigit() or term in ENGLISH_STOPWORDS or term in RUSSIAN_STOPWORDS:
        return False
    return len(term) > 1 or ord(term) > 0x2FFF  # a lone CJK character is a word; a lone letter is not


def _normalized(weights: Mapping[str, float]) -> dict[str, float]:
    total = float(sum(weights.values()))
    return {term: weight / total for term, weight in weights.items()} if total > 0 else {}


def _sorted(weights: Mapping[str, float]) -> dict[str, float]:
    return dict(sorted(weights.items(), key=lambda item: (-item[1], item[0])))
