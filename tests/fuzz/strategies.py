"""Hypothesis strategies for hostile inputs: questions, filter values, JSON-like replies (issue 14)."""

from __future__ import annotations

from hypothesis import strategies as st

# Every code point, lone surrogates (category Cs) and control characters included.
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())

PIECES = st.sampled_from(
    [
        "",
        " ",
        "\t\n\r",
        "\x00",
        "\x07\x1b[31m",
        "\u200f",
        "\u202e",
        "\u200b",
        "\ufeff",
        "\ud800",
        "\udfff",
        "\udcff",
        "\u2028",
        "\u0085",
        "Radium Institute",
        "Marie Curie",
        "Volga",
        "Лев Ландау",
        "река Волга",
        "河流 研究所",
        "ﷺ",
        "🙂",
        "e\u0301",
        "{0}",
        "{question}",
        "%s%n",
        "$1",
        ".*+?[](|)^\\",
        "(?P<x>",
        "\\u0000",
        "'; DROP TABLE chunks; --",
        '"',
        "<script>alert(1)</script>",
        "`rm -rf /`",
        "../../etc/passwd",
        "NaN",
        "1e400",
        "-0",
        "null",
    ]
)

QUESTIONS = st.one_of(
    st.lists(st.one_of(PIECES, st.text(ANY_CHAR, max_size=20)), max_size=8).map("".join),
    st.text(ANY_CHAR, max_size=200),
    st.builds(lambda piece, n: piece * n, PIECES.filter(bool), st.integers(1, 20_000)),
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(ANY_CHAR, max_size=12),
    PIECES,
)

JSON_LIKE = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(ANY_CHAR, max_size=8), PIECES), inner, max_size=4),
    ),
    max_leaves=12,
)
"""What json.loads (plus NaN/Infinity and lone surrogates) can give a program: any nesting of scalars."""
