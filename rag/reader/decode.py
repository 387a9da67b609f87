"""From start/end logits to the best answer span (and the no-answer score at the first token)."""

from __future__ import annotations

import re

import numpy as np

from stores.tokenize import ENGLISH_STOPWORDS

# a letter or digit of a script written with spaces between words (CJK and kana excluded: no word edges there)
_WORD_CHAR = re.compile(r"[^\W_\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")
SCORE_DECIMALS = 2  # what best_spans ranks by: differences below 0.01 are kernel noise
MAX_NAME_WORDS = 4  # how far a span is widened over the name it stands in, each way
EDGE = " \t\n\"'«»“”„‘’()[]{}<>《》「」『』,.;:!?。，、；：！？-–—|"


def best_spans(
    start: np.ndarray, end: np.ndarray, lo: int, hi: int, max_tokens: int, top: int = 1
) -> list[tuple[int, int, float]]:
    """The `top` (start, end, score) token spans inside [lo, hi), end >= start, at most max_tokens long, best first.

    A score is start + end logit rounded to SCORE_DECIMALS, and spans whose scores tie are ordered shorter first,
    then by start: the encoder's logits differ in their last digits with the CPU's kernels (AVX2, AVX-512,
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
    A Latin-script name cut inside is made whole ("Quellbrook College| of Design", "River |Caldry")."""
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
_NAME_WORD = r"[A-Z][\w'’-]*"  # a capitalized word of a Latin-script name
_AFTER = re.compile(rf" (?:{_JOINER})?{_NAME_WORD}")  # the next word of the name: "Halvmere| School of Art"
# the word before it ("River |Caldry"), unless it opens a sentence: capitalized there anyway ("Today |Caldry")
_BEFORE = re.compile(rf"(?<![\w'’-])(?<![.!?]\s)(?<!^){_NAME_WORD} (?:{_JOINER})?$")
_NOT_NAMES = frozenset(w.capitalize() for w in ENGLISH_STOPWORDS)  # "In", "The": a sentence's first word


def _whole_name(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a capitalized span over the whole Latin-script name it stands in: the capitalized words (and "of",
    "de", "von" ... between them) right after it and right before it ("Halvmere" -> "Halvmere School of
    Architecture", "Carrow Bay" -> "University of Carrow Bay", "Caldry" -> "River Caldry"). A span in lower case
    stays, and so does one a comma or a full stop parts from its neighbour ("Skarnvik, Norway")."""
    words = text[start:end].split()
    if not words or not (words[0][:1].isupper() and words[-1][:1].isupper()):
        return start, end
    for _ in range(MAX_NAME_WORDS):
        after = _AFTER.match(text, end)
        if after is None or after.group().split()[-1] in _NOT_NAMES:
            break
        end = after.end()
    for _ in range(MAX_NAME_WORDS):
        before = _BEFORE.search(text, max(0, start - 40), start)
        if before is None or before.group().split()[0] in _NOT_NAMES:
            break
        start = before.start()
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
