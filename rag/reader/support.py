"""Whether a written answer is supported by the passages it cites: the check the reader applies to LLM answers.

Why a lexical check: a chat model may answer from its own memory and cite a passage that does not say it. The
answer's content words (stemmed, stopwords dropped, the project's tokenizer for every language) must mostly
occur in the cited passages; a number or name the passages never mention fails. Chinese is compared folded to
simplified: a model may answer in the other script than the passages are written in.
"""

from __future__ import annotations

from collections.abc import Iterable

from stores.chinese_script import simplified
from stores.tokenize import tokenize

MIN_SUPPORTED_SHARE = 0.8


def support_share(answer: str, passages: Iterable[str]) -> float:
    """The share of the answer's content terms found in the passages (1.0 for an answer with none)."""
    terms = set(tokenize(simplified(answer)))
    if not terms:
        return 1.0
    found: set[str] = set()
    for text in passages:
        found |= terms & set(tokenize(simplified(text)))
    return len(found) / len(terms)


def is_supported(answer: str, passages: Iterable[str]) -> bool:
    return support_share(answer, passages) >= MIN_SUPPORTED_SHARE
