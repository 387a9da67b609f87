"""Token inputs of the reader and the gold answer positions in them.

The input is the pair ("query: " + question, context), XLM-R tokenized, context truncated to fit `max_len`.
Gold positions: every occurrence of a gold answer in the context (case-insensitive); where the dataset gives
the answer's offset (CMRC) only that occurrence counts when it was selected. Training maximizes the marginal
likelihood over all occurrences, so a name repeated in the context is not a false negative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from rag.reader.window import ReadContext

QUERY_PREFIX = "query: "


@dataclass
class Encoded:
    input_ids: np.ndarray  # int64 [n]
    offsets: np.ndarray  # int32 [n, 2] character offsets in the context string; -1 outside it
    context_start: int  # first context token
    context_end: int  # one past the last context token


def encode(tokenizer, question: str, context: str, max_len: int) -> Encoded:
    """The pair's token ids and the context tokens' offsets; an over-long question is cut to half of max_len, so
    the context always keeps room (truncating only the context would fail on a question longer than max_len)."""
    query = _cut(tokenizer, QUERY_PREFIX + question, max_len // 2)
    enc = tokenizer(query, context, truncation="only_second", max_length=max_len, return_offsets_mapping=True)
    seq = enc.sequence_ids()
    offsets = np.array(enc["offset_mapping"], dtype=np.int32)
    in_context = np.array([s == 1 for s in seq])
    offsets[~in_context] = -1
    idx = np.flatnonzero(in_context)
    start, end = (int(idx[0]), int(idx[-1]) + 1) if len(idx) else (len(seq), len(seq))
    return Encoded(np.array(enc["input_ids"], dtype=np.int64), offsets, start, end)


def _cut(tokenizer, text: str, max_tokens: int) -> str:
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    return text if len(offsets) <= max_tokens else text[: offsets[max_tokens - 1][1]]


def answer_char_spans(
    ctx: ReadContext, answers: list[str], known_starts: dict[int, list[int]]
) -> list[tuple[int, int]]:
    """[start, end) character spans of gold answers in the context string."""
    lowered = ctx.text.lower()
    spans: list[tuple[int, int]] = []
    preferred: list[tuple[int, int]] = []
    for answer in answers:
        answer = answer.strip()
        if not answer:
            continue
        for match in re.finditer(re.escape(answer.lower()), lowered):
            s, e = match.span()
            before = lowered[s - 1] if s else " "
            after = lowered[e] if e < len(lowered) else " "
            if answer[0].isalnum() and answer.isascii() and (before.isalnum() or after.isalnum()):
                continue  # "1" inside "1963" or "art" inside "party"
            spans.append((s, e))
            located = ctx.locate(s, e)
            if (
                located
                and not located[0].in_title
                and located[2] - located[1] == e - s
                and located[1] in known_starts.get(located[0].passage, [])
            ):
                preferred.append((s, e))
    return preferred or spans


def token_positions(encoded: Encoded, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token (start, end) pairs, inclusive, of character spans that survived truncation."""
    starts = encoded.offsets[:, 0]
    ends = encoded.offsets[:, 1]
    out = []
    for s, e in spans:
        inside = np.flatnonzero((ends > s) & (starts < e) & (starts >= 0))
        if len(inside):
            out.append((int(inside[0]), int(inside[-1])))
    return out


@dataclass
class Scored:
    """The encoder's output for one question: context, encoding and per-token start / end logits."""

    context: ReadContext
    encoded: Encoded
    start: np.ndarray
    end: np.ndarray
