"""Rule-based query variants (multi-query without an LLM), built from the index's own vocabulary.

Three kinds, each only when it says something the query does not:
  keywords  the content words only (stopwords and question words dropped): BM25 and the embedder both see
            the query's topic without the question's syntax.
  spelling  each out-of-vocabulary word (its index term unknown to the index) replaced by the indexed term
            closest in Levenshtein distance (<= 1 for terms of up to 4 characters, <= 2 for longer ones),
            ties broken by the higher document frequency. Off for Chinese / Japanese / Korean: character
            bigrams have no useful edit neighbours.
  synonyms  the keywords plus, for each query term, its strongest corpus neighbour by normalized pointwise
            mutual information over documents (NPMI = log(p(a,b) / (p(a)p(b))) / -log p(a,b), from the BM25
            term counts; at least MIN_COOCCURRENCE shared documents and NPMI >= MIN_NPMI). Words that keep
            appearing together in this corpus (a name's other half, an abbreviation's expansion, a
            transliteration) are the closest thing to synonyms the corpus offers (for CJK, bigrams that
            overlap the term are pieces of the same word and skipped); the stemmer already merges
            inflections, so "sharing a stem" adds nothing here. Terms found in more than
            max(MAX_NEIGHBOUR_DF_FRACTION of the documents, NEIGHBOUR_DF_FLOOR) are skipped: their
            neighbours are noise, and counting them costs time on a large index.
The variants carry index terms (stems) for replaced / added words: they are meant for BM25, and readable
enough for the embedder. A variant equal to the query (or to another variant) is never returned.
"""

from __future__ import annotations

import math
import re
import threading
import weakref
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from stores.backend import Lexical
from stores.chinese_script import simplified
from stores.scripts import CJK
from stores.tokenize import ENGLISH_STOPWORDS, RUSSIAN_STOPWORDS, tokenize

VARIANT_KINDS: tuple[str, ...] = ("keywords", "spelling", "synonyms")
MIN_COOCCURRENCE = 2
MIN_NPMI = 0.5
MAX_NEIGHBOUR_DF_FRACTION = 0.05
NEIGHBOUR_DF_FLOOR = 20
MIN_SPELL_CHARS = 4  # shorter words are too often abbreviations to correct



QUESTION_WORDS = frozenset(
    [
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "did", "does", "do", "is",
        "are", "was", "were", "name", "named", "какой", "какая", "какое", "какие", "каком", "какого",
        "кто", "что", "где", "когда", "почему", "зачем", "как", "сколько", "чей", "чья", "ли", "哪", "哪个",
        "哪些", "什么", "谁", "何时", "哪里", "为什么", "怎么", "多少", "是", "的", "了", "吗", "呢",
    ]
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NO_SPELLING_LANGUAGES = frozenset({"zh", "ja", "ko"})


def rule_variants(query: str, bm25: Lexical, language: str = "en", max_variants: int = 3) -> list[tuple[str, str]]:
    """Up to `max_variants` (variant, kind) pairs, in the order keywords, spelling, synonyms."""
    if max_variants <= 0 or not query.strip():
        return []
    seen = {_normalized(query)}
    variants: list[tuple[str, str]] = []
    candidates = [(keyword_form(query), "keywords")]
    if language not in _NO_SPELLING_LANGUAGES and not CJK.search(query):
        candidates.append((spelling_variant(query, bm25), "spelling"))
    candidates.append((synonym_variant(query, bm25), "synonyms"))
    for text, kind in candidates:
        key = _normalized(text)
        if text and key not in seen:
            seen.add(key)
            variants.append((text, kind))
        if len(variants) >= max_variants:
            break
    return variants


def keyword_form(query: str) -> str:
    """The query without stopwords and question words (the question itself when nothing is left): a
    rule-based variant and a web query."""
    kept = [w for w in _WORD.findall(query) if _carries_content(w)]
    return " ".join(kept) if kept else query.strip()


def _carries_content(word: str) -> bool:
    lowered = word.lower()
    return (lowered not in ENGLISH_STOPWORDS and lowered not in RUSSIAN_STOPWORDS
            and simplified(lowered) not in QUESTION_WORDS)  # the Chinese ones are in simplified characters


def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` that carry content (no stopwords, no question words, no 1-letter words)."""
    return [w.lower() for w in _WORD.findall(text) if len(w) > 1 and _carries_content(w)]


def spelling_variant(query: str, bm25: Lexical) -> str:
    """The query with each OOV word replaced by its closest indexed term; '' when nothing was corrected."""
    vocabulary = bm25.vocabulary()
    if not vocabulary:
        return ""
    corrected, changed = [], False
    for word in _WORD.findall(query):
        terms = tokenize(word)
        if len(terms) == 1 and terms[0] not in vocabulary and not terms[0].isdigit() and len(word) >= MIN_SPELL_CHARS:
            fix = closest_term(terms[0], bm25)
            if fix is not None:
                corrected.append(fix)
                changed = True
                continue
        corrected.append(word)
    return " ".join(corrected) if changed else ""


def closest_term(term: str, bm25: Lexical) -> str | None:
    """The indexed term nearest to `term` by edit distance (bounded as in the module docstring), or None."""
    limit = 1 if len(term) <= 4 else 2
    lexicon = _lexicon(bm25)
    best: tuple[int, int, str] | None = None
    for candidate in lexicon.candidates(term, limit):
        distance = levenshtein(term, candidate, limit)
        if distance <= limit:
            key = (distance, -bm25.document_frequency(candidate), candidate)
            if best is None or key < best:
                best = key
    return best[2] if best else None


def synonym_variant(query: str, bm25: Lexical) -> str:
    """Keywords plus each query term's strongest NPMI neighbour; '' when no term has one."""
    terms = list(dict.fromkeys(tokenize(query)))
    neighbours: list[str] = []
    for term in terms:
        neighbour = corpus_neighbour(term, bm25, exclude=set(terms) | set(neighbours))
        if neighbour:
            neighbours.append(neighbour)
    if not neighbours:
        return ""
    return f"{keyword_form(query) or query.strip()} {' '.join(neighbours)}"


def corpus_neighbour(term: str, bm25: Lexical, exclude: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The term with the highest NPMI with `term` over documents (thresholds in the module docstring)."""
    n_docs = len(bm25)
    df_term = bm25.document_frequency(term)
    if n_docs == 0 or df_term < MIN_COOCCURRENCE or df_term > max(MAX_NEIGHBOUR_DF_FRACTION * n_docs,
                                                                  NEIGHBOUR_DF_FLOOR):
        return None
    vocabulary = bm25.vocabulary()
    cjk = bool(CJK.search(term))
    best: tuple[float, str] | None = None
    for other, together in bm25.cooccurrence(bm25.documents_with(term)).items():
        if together < MIN_COOCCURRENCE or other == term or other in exclude or other.isdigit():
            continue
        if cjk and set(other) & set(term):  # an overlapping bigram: a piece of the same word, not a synonym
            continue
        p_joint = together / n_docs
        if p_joint >= 1.0:
            continue
        npmi = math.log(p_joint / ((df_term / n_docs) * (vocabulary[other] / n_docs))) / -math.log(p_joint)
        if npmi >= MIN_NPMI and (best is None or (npmi, other) > best):
            best = (npmi, other)
    return best[1] if best else None


def levenshtein(a: str, b: str, limit: int) -> int:
    """Edit distance, or limit + 1 as soon as it must exceed `limit` (banded dynamic programming)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


@dataclass
class _Lexicon:
    """Indexed terms by character bigram (with word boundaries), to find edit-distance candidates fast.

    k edits change at most 2k of a word's boundary bigrams, so a term within distance k shares at least
    |bigrams| - 2k of them: one sparse product finds those among the whole vocabulary.
    """

    terms: list[str]
    lengths: np.ndarray
    bigram_ids: dict[str, int]
    by_bigram: sparse.csr_matrix  # term x bigram presence

    @classmethod
    def build(cls, terms: list[str]) -> _Lexicon:
        bigram_ids: dict[str, int] = {}
        indptr, indices = [0], []
        for term in terms:
            ids = {bigram_ids.setdefault(g, len(bigram_ids)) for g in _bigrams(term)}
            indices.extend(sorted(ids))
            indptr.append(len(indices))
        matrix = sparse.csr_matrix(
            (np.ones(len(indices), dtype=np.int32), np.asarray(indices, dtype=np.int32), np.asarray(indptr)),
            shape=(len(terms), max(len(bigram_ids), 1)),
        )
        return cls(terms, np.fromiter(map(len, terms), dtype=np.int64, count=len(terms)), bigram_ids, matrix)

    def candidates(self, term: str, limit: int) -> list[str]:
        grams = {self.bigram_ids[g] for g in _bigrams(term) if g in self.bigram_ids}
        if not grams:
            return []
        query = np.zeros(self.by_bigram.shape[1], dtype=np.int32)
        query[list(grams)] = 1
        shared = self.by_bigram @ query
        needed = max(1, len(_bigrams(term)) - 2 * limit)
        close = (shared >= needed) & (np.abs(self.lengths - len(term)) <= limit)
        return [self.terms[i] for i in np.flatnonzero(close)]


_LEXICONS: weakref.WeakKeyDictionary[Lexical, tuple[tuple[int, int], _Lexicon]] = weakref.WeakKeyDictionary()
_LEXICONS_LOCK = threading.Lock()


def _lexicon(bm25: Lexical) -> _Lexicon:
    """The index's bigram lexicon, rebuilt only when its vocabulary or size changed."""
    signature = (bm25.vocabulary_size, len(bm25))
    with _LEXICONS_LOCK:
        cached = _LEXICONS.get(bm25)
        if cached is None or cached[0] != signature:
            cached = (signature, _Lexicon.build(list(bm25.vocabulary())))
            _LEXICONS[bm25] = cached
        return cached[1]


def _bigrams(term: str) -> set[str]:
    padded = f"^{term}$"
    return {padded[i : i + 2] for i in range(len(padded) - 1)}


def _normalized(text: str) -> str:
    """Words only, lower-cased: a variant differing from the query by punctuation alone is the same query."""
    return " ".join(_WORD.findall(text.lower()))
