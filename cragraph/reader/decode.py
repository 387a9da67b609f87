"""From start/end logits to the best answer span (and the no-answer score at the first token)."""

from __future__ import annotations

import numpy as np

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
    """Shrink [start, end) past whitespace and edge punctuation (a closing bracket stays if one opened)."""
    while start < end and text[start] in EDGE:
        start += 1
    while end > start and text[end - 1] in EDGE:
        if text[end - 1] == ")" and "(" in text[start : end - 1]:
            break
        end -= 1
    return start, end
