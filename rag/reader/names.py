"""Which page titles a question names: by their terms, in any inflection and order, so "Калугин, Мирон
Сергеевич" is named by "Кто старше: Мирон Калугин или ...?" and "Тальвея (компания)" by "компании «Тальвея»"."""

from __future__ import annotations

from collections.abc import Sequence

from stores.tokenize import tokenize


def named_pages(question: str, titles: Sequence[str]) -> list[int]:
    """The indices of the titles the question names, in the order it names them, one per entity: a title is
    named when the question holds at least half of its terms and two of them (all of a one-term title), so a
    patronymic or a "(company)" the question leaves out still counts."""
    asked = tokenize(question)
    at = {term: i for i, term in reversed(list(enumerate(asked)))}
    found: dict[frozenset[str], tuple[int, int, int]] = {}
    for index, title in enumerate(titles):
        terms = set(tokenize(title))
        shared = terms & at.keys()
        if terms and len(shared) >= min(2, len(terms)) and 2 * len(shared) >= len(terms):
            found.setdefault(frozenset(shared), (min(at[t] for t in shared), max(at[t] for t in shared), index))
    # a name inside a longer named one ("Rookstead" in "Rookstead Footbridge") is not an entity of its own here
    kept = [k for k in found if not any(k < other for other in found)]
    return [found[k][2] for k in sorted(kept, key=lambda k: (_first(k, kept, at), found[k][0]))]


def _first(name: frozenset[str], names: Sequence[frozenset[str]], at: dict[str, int]) -> int:
    """Where the question first says a term of the name that the other names lack ("Lumm" of "River Lumm" beside
    "River Pease"), so two names sharing a word keep the question's order; any of its terms when it has none."""
    own = name - set().union(*(other for other in names if other != name))
    return min(at[t] for t in own or name)


def span_of(question: str, title: str, other: str = "") -> tuple[int, int]:
    """The first and last positions among the question's terms of the title's terms that the other title lacks
    ("тесельск" of "Тесельский мост" beside "Сулейский мост"); (-1, -1) when none stands in it."""
    own = set(tokenize(title)) - set(tokenize(other))
    positions = [i for i, term in enumerate(tokenize(question)) if term in own]
    return (min(positions), max(positions)) if positions else (-1, -1)


def root(term: str) -> str:
    """A term cut to five characters, so one root's words meet ("architect" / "architecture", "длина" /
    "длиной") where the stemmer parts them."""
    return term[:5]


def roots(text: str) -> set[str]:
    """The roots of a text's terms."""
    return {root(term) for term in tokenize(text)}
