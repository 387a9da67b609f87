"""Cheap query features and the query class that sets the dense weight of score fusion (dynamic alpha).

Why: a query full of identifiers, numbers, acronyms or words rare in the index is matched best by BM25; a
long natural-language question is matched best by the embedder. The features cost a tokenization and a few
dictionary lookups (tens of microseconds), so they can run before every search.

The class rule (`query_class`), in order:
  term-heavy  the query looks like a lookup of exact tokens: an acronym or a code-like token (letters mixed
              with digits, e.g. "COVID-19", "H2O"), or digits/symbols >= 10% of its characters, or it is short
              (<= 4 index terms) and at least half of its terms are rare in the index.
  semantic    a natural-language question whose words the index knows well: >= 7 index terms, at most one
              in five rare, no acronyms or code-like tokens, and little out-of-vocabulary text.
  mixed       everything else.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Literal

from stores.backend import Lexical
from stores.scripts import CJK
from stores.text import detect_language
from stores.tokenize import tokenize

QueryClass = Literal["term-heavy", "semantic", "mixed"]
QUERY_CLASSES: tuple[QueryClass, ...] = ("term-heavy", "semantic", "mixed")

# A term is rare when it occurs in at most this share of the index's documents (at least RARE_MIN_DF).
RARE_DF_FRACTION = 0.01
RARE_MIN_DF = 2

# Dense weight per class: the grid (0, 0.1, ..., 1) maximum of macro nDCG@10 over training data only
# (hipporag_legacy_train100/hotpotqa training cut and the XQuAD train half, en/ru/zh; e5-small bench indexes).
# On the test sets (README ablation) they lose to the retriever's gap-based dynamic fusion on hotpotqa_migres200
# (R@5 .858 vs .865), tie on XQuAD ru/zh, and win on scifact_beir_test (.796 vs .774: its `mixed` claims gain from the
# higher BM25 weight), so they are an option for corpora matched by exact terms, not the default fusion.
DEFAULT_ALPHAS: dict[str, float] = {"term-heavy": 0.6, "semantic": 0.8, "mixed": 0.6}

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_CYRILLIC = re.compile("[\u0400-\u04ff]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")
_ACRONYM = re.compile(r"^(?:[A-ZА-ЯЁ]{2,}[a-zа-яё]?s?|[A-Za-z]*[a-z][A-Z][A-Za-z]*)$")  # NASA, GPUs, mRNA, iPhone
_CODE = re.compile(r"^(?=.*\d)(?=.*[^\W\d_])[\w\-']+$")  # letters and digits in one token: H2O, COVID-19, p53
_SENTENCE_PUNCTUATION = frozenset(".,;:!?'\"()«»“”‘’，。？！、：；（）")


@dataclass(frozen=True)
class QueryFeatures:
    """What `query_class` and the strategy rules look at; JSON-able via `as_dict` for the trace."""

    n_words: int  # words as written (a CJK run counts one word per two characters)
    n_terms: int  # index terms after stopword removal (CJK: character bigrams)
    digit_symbol_ratio: float  # digits and non-sentence symbols over non-space characters
    capitalized: int  # capitalised words after the first word (names)
    acronyms: int  # all-caps or mixed-case tokens: NASA, mRNA, iPhone
    codes: int  # tokens mixing letters and digits: H2O, COVID-19
    rare_term_ratio: float  # share of indexed query terms whose idf is above the rare cut
    oov_ratio: float  # share of query terms the index does not know
    language: str  # ISO 639-1 ('en', 'ru', 'zh', ...) or 'und'
    script: str  # latin, cyrillic, cjk, mixed or none

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def query_features(query: str, bm25: Lexical) -> QueryFeatures:
    """Features of `query` against the index's vocabulary (document frequencies)."""
    words = _WORD.findall(query)
    terms = tokenize(query)
    unique_terms = list(dict.fromkeys(terms))
    vocabulary = bm25.vocabulary()
    known = [t for t in unique_terms if t in vocabulary]
    rare_cut = max(RARE_MIN_DF, RARE_DF_FRACTION * len(bm25))
    rare = [t for t in known if vocabulary[t] <= rare_cut]
    visible = [c for c in query if not c.isspace()]
    symbols = sum(1 for c in visible if c.isdigit() or (not c.isalnum() and c not in _SENTENCE_PUNCTUATION))
    n_words = sum(max(1, len(w) // 2) if CJK.search(w) else 1 for w in words)
    return QueryFeatures(
        n_words=n_words,
        n_terms=len(terms),
        digit_symbol_ratio=symbols / len(visible) if visible else 0.0,
        capitalized=sum(1 for w in words[1:] if w[:1].isupper() and not _ACRONYM.match(w)),
        acronyms=sum(1 for w in words if _ACRONYM.match(w) and not _CODE.match(w)),
        codes=sum(1 for w in words if _CODE.match(w)),
        rare_term_ratio=len(rare) / len(known) if known else 0.0,
        oov_ratio=(len(unique_terms) - len(known)) / len(unique_terms) if unique_terms else 0.0,
        language=detect_language(query),
        script=_script(query),
    )


def query_class(features: QueryFeatures) -> QueryClass:
    """term-heavy / semantic / mixed by the rule in the module docstring."""
    if (
        features.acronyms
        or features.codes
        or features.digit_symbol_ratio >= 0.10
        or (features.n_terms <= 4 and features.rare_term_ratio >= 0.5)
    ):
        return "term-heavy"
    if features.n_terms >= 7 and features.rare_term_ratio <= 0.2 and features.oov_ratio <= 0.2:
        return "semantic"
    return "mixed"


def alpha_for(cls: QueryClass | str, alphas: dict[str, float] | None = None) -> float:
    """The dense weight of score fusion for a query class (`alphas` overrides DEFAULT_ALPHAS per class)."""
    table = {**DEFAULT_ALPHAS, **(alphas or {})}
    if cls not in table:
        raise ValueError(f"unknown query class {cls!r}; expected one of {', '.join(QUERY_CLASSES)}")
    alpha = float(table[cls])
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha for {cls!r} is {alpha}; it must be in [0, 1]")
    return alpha


def _script(text: str) -> str:
    scripts = [name for name, pattern in (("latin", _LATIN), ("cyrillic", _CYRILLIC), ("cjk", CJK))
               if pattern.search(text)]
    if not scripts:
        return "none"
    return scripts[0] if len(scripts) == 1 else "mixed"
