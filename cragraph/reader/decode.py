"""From start/end logits to the best answer span (and the no-answer score at the first token)."""

from __future__ import annotations

import re

import numpy as np

# a letter or digit of a script written with spaces between words (CJK and kana excluded: no word edges there)
_WORD_CHAR = re.compile(r"[^\W_\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")
SCORE_DECIMALS = 2  # what best_spans ranks by: differences below 0.01 are kernel noise
EDGE = " \t\n\"'«»“”„‘’()[]{}<>《》「」『』,.;:!?。，、；：！？-–—|"


def best_spans(
    start: np.ndarray, end: np.ndarray, lo: int, hi: int, max_tokens: int, top: int = 1
) -> list[tuple[int, int, float]]:
    """The `top` (start, end, score) token spans inside [lo, hi), end >= start, at most max_tokens long, best first.

    A score is start + end logit rounded to SCORE_DECIMALS, and spans whose scores tie are ordered shorter first,
    then by start: the int8 encoder's logits differ in their last digits with the CPU's kernels (AVX2, AVX-512,
    issue 42), and that noise must not decide between two near-equal spans ("Volga" / "The Volga"), so a near tie
    is broken the same way on every CPU. It cannot hold a score a kernel moves across a rounding edge, nor two
    spans whose scores the kernels move by more than that (then the answer does depend on the CPU)."""
    if hi <= lo or top <= 0:
        return []
    s = start[lo:hi].astype(np.float64)
    e = end[lo:hi].astype(np.float64)
    n = hi - lo
    i, j = np.indices((n, n))
    grid = np.where((j >= i) & (j - i < max_tokens), np.round(s[:, None] + e[None, :], SCORE_DECIMALS), -np.inf)
    flat = grid.ravel()
    k = min(top, flat.size)
    cut = np.partition(flat, flat.size - k)[flat.size - k]  # the k-th best score: every span tied with it competes
    picked = np.flatnonzero((flat >= cut) & np.isfinite(flat))
    a, b = np.divmod(picked, n)
    order = np.lexsort((a, b - a, -flat[picked]))[:top]  # the last key sorts first: score, then length, then start
    return [(int(a[o]) + lo, int(b[o]) + lo, float(flat[picked[o]])) for o in order]


def clean_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Whole words only, then shrink [start, end) past whitespace and edge punctuation and cut at a bracket
    left open (a closing bracket stays if one opened). Subword tokens end inside words ("Чарльзом Ричард|ом").
    A name cut at its "of" is made whole ("Quellbrook College| of Design", "University of |Carrow Bay")."""
    start, end = _whole_name(text, *_whole_words(text, start, end))
    opened = text.rfind("(", start, end)
    if opened > start and ")" not in text[opened:end]:
        end = opened
    while start < end and text[start] in EDGE:
        start += 1
    while end > start and text[end - 1] in EDGE:
        if text[end - 1] == ")" and "(" in text[start : end - 1]:
            break
        end -= 1
    return start, end


_JOINER = r"(?:of|de|du|da|del|von|van|der)\s+(?:the\s+)?"
_OF_AFTER = re.compile(rf"\s+{_JOINER}")  # " of " right after a span
_OF_BEFORE = re.compile(rf"\s+{_JOINER}$")  # " of " right before a span
_NEXT_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_LAST_WORD = re.compile(r"[^\W\d_][\w'’-]* *$")


def _whole_name(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a capitalized span over the "of" part of the name it stands in: "of" and the capitalized words after
    it, or the capitalized words and "of" before it. A span in lower case stays."""
    words = text[start:end].split()
    if not words or not (words[0][:1].isupper() and words[-1][:1].isupper()):
        return start, end
    if joined := _OF_AFTER.match(text, end):
        at = joined.end()
        while (word := _NEXT_WORD.match(text, at)) and word.group()[:1].isupper():
            end, at = word.end(), word.end() + 1
            if text[word.end():at] != " ":
                break
    if joined := _OF_BEFORE.search(text, max(0, start - 12), start):
        at = joined.start()
        while (word := _LAST_WORD.search(text, max(0, at - 40), at)) and word.group()[:1].isupper():
            start = at = word.start()
    return start, end


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to the edges of the words it cuts into."""
    if end <= start:
        return start, end
    while 0 < start < len(text) and _WORD_CHAR.match(text[start - 1]) and _WORD_CHAR.match(text[start]):
        start -= 1
    while 0 < end < len(text) and _WORD_CHAR.match(text[end - 1]) and _WORD_CHAR.match(text[end]):
        end += 1
    return start, end
