"""From start/end logits to the best answer span (and the no-answer score at the first token)."""

from __future__ import annotations

import re

import numpy as np

# a letter or digit of a script written with spaces between words (CJK and kana excluded: no word edges there)
_WORD_CHAR = re.compile(r"[^\W_\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")
EDGE = " \t\n\"'«»“”„‘’()[]{}<>《》「」『』,.;:!?。，、；：！？-–—|"


def best_spans(
    start: np.ndarray, end: np.ndarray, lo: int, hi: int, max_tokens: int, top: int = 1
) -> list[tuple[int, int, float]]:
    """The `top` (start, end, score) token spans inside [lo, hi), end >= start, at most max_tokens long."""
    if hi <= lo:
        return []
    s = start[lo:hi]
    e = end[lo:hi]
    grid = s[:, None] + e[None, :]
    n = hi - lo
    i, j = np.indices((n, n))
    grid = np.where((j >= i) & (j - i < max_tokens), grid, -np.inf)
    flat = np.argsort(grid, axis=None)[::-1][:top]
    out = []
    for f in flat:
        a, b = divmod(int(f), n)
        if np.isfinite(grid[a, b]):
            out.append((a + lo, b + lo, float(grid[a, b])))
    return out


def clean_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Whole words only, then shrink [start, end) past whitespace and edge punctuation and cut at a bracket
    left open (a closing bracket stays if one opened). Subword tokens end inside words ("Чарльзом Ричард|ом")."""
    start, end = _whole_words(text, start, end)
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


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to the edges of the words it cuts into."""
    if end <= start:
        return start, end
    while 0 < start < len(text) and _WORD_CHAR.match(text[start - 1]) and _WORD_CHAR.match(text[start]):
        start -= 1
    while 0 < end < len(text) and _WORD_CHAR.match(text[end - 1]) and _WORD_CHAR.match(text[end]):
        end += 1
    return start, end
