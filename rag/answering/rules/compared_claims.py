"""Yes / no questions that compare or pair what pages say, decided from the values the pages give.

Why: "Is A longer than B?", "鹤原电视塔的高度超过200米吗？" and "Were A and B both born in W?" are yes / no
questions whose answer is in no single span: it follows from a value per page (its length, its year, where each
was born). The pages are those whose titles the question names (in any inflection and order, by their terms),
taken in the order the question names them, so the first is the claim's subject in English, Russian and Chinese
alike ("Is A taller than B", "Выше ли A, чем B", "A比B高吗").

- Comparative claims: each page's compared value (rag.answering.rules.compare) against the other page's, or against
  the number the question gives; yes when the comparison holds.
- Paired claims ("both", "the same"): "the same" holds when the spans the reader points at in the two pages (in
  the sentences that speak of the asked attribute) name one thing; "both ... W" when each page says W in a
  sentence that speaks of the rest of the question.
Nothing to decide from (fewer pages than the form needs, a value missing, a tie): None, the caller goes on.
"""

from __future__ import annotations

from rag.answering.rules.compare import (
    attribute_terms,
    attribute_value,
    comparatives,
    comparison_kind,
    question_value,
    sentences,
)
from rag.reader import grammar
from rag.reader.names import named_pages, span_of
from rag.reader.types import Passage, ReaderAnswer
from stores.scripts import HAN
from stores.tokenize import tokenize


def compared_claim(question: str, passages: list[Passage]) -> tuple[bool, int] | None:
    """(whether the comparison the question claims holds, the subject's passage), or None."""
    found = comparison_kind(question)
    if found is None:
        return None
    kind, sign = found
    pages = named_pages(question, [p.title for p in passages])
    if not pages:
        return None
    titles = " ".join(passages[i].title for i in pages)
    attribute = attribute_terms(question, titles)
    names = tuple(passages[i].title for i in pages[:2])
    subject = attribute_value(passages[pages[0]], kind, attribute, names)
    if len(pages) >= 2 and _between(question, passages[pages[0]].title, passages[pages[1]].title):
        other = attribute_value(passages[pages[1]], kind, attribute, names)
    elif len(pages) == 1:
        other = question_value(question, passages[pages[0]].title, kind)
    else:
        return None
    if subject is None or other is None or subject == other:
        return None
    return (subject > other) == (sign > 0), pages[0]


def paired_claim(question: str, passages: list[Passage], spans: list[ReaderAnswer]) -> tuple[bool, int] | None:
    """(whether both pages say what the question claims, or the same thing, the first page), or None."""
    same = grammar.says(question, grammar.words("SAME"))
    if not (same or grammar.says(question, grammar.words("BOTH"))):
        return None
    pages = named_pages(question, [p.title for p in passages])
    if len(pages) < 2 or not _joined(question, passages[pages[0]].title, passages[pages[1]].title):
        return None
    first, second = pages[:2]
    names = set(tokenize(passages[first].title)) | set(tokenize(passages[second].title))
    if same:
        attribute = set(tokenize(question)) - names
        said = [_page_span(spans, page, passages[page].title, attribute) for page in (first, second)]
        if None in said:
            return None
        a, b = (set(tokenize(s.text)) for s in said if s is not None)
        return _one_name(a, b), first
    # the value both are claimed to share: the page the question names after the pair ("... born in Wendlemoor"),
    # else what the question says beside the pair's names; each page must say it where it says the rest
    value = {t for page in pages[2:] for t in tokenize(passages[page].title)} or set(tokenize(question)) - names
    attribute = set(tokenize(question)) - names - value
    return all(_says(passages[page].text, set(tokenize(passages[page].title)), value, attribute)
               for page in (first, second)), first


def _says(text: str, entity: set[str], value: set[str], attribute: set[str]) -> bool:
    """The page's sentence that best speaks of its entity and the asked attribute holds the value: a sentence
    about the entity first ("Mira Stens was born in Kessa" over "Her colleague was born in Dunholm"), then the
    one sharing the most of the attribute, then one holding the value."""
    best: tuple[bool, int, bool] | None = None
    for sentence in sentences(text):
        terms = set(tokenize(sentence))
        key = (bool(entity & terms), len(attribute & terms), value <= terms)
        if (not attribute or key[1]) and (best is None or key > best):
            best = key
    return best is not None and best[2]


def _between(question: str, first: str, second: str) -> bool:
    """The question compares the first name with the second: a "than" stands in it, or its comparative stands
    between the two names ("Тесельский мост длиннее Сулейского моста")."""
    if grammar.says(question, grammar.words("THAN")):
        return True
    (_, end), (start, _) = span_of(question, first, second), span_of(question, second, first)
    return any(end < len(tokenize(question[:at])) <= start for at, _ in comparatives(question))


def _joined(question: str, first: str, second: str) -> bool:
    """The two names stand side by side in the question, joined by a conjunction only ("A and B", "A и B",
    "A和B": Chinese terms are character pairs, so the one-character conjunction makes two pairs between them)."""
    (_, end), (start, _) = span_of(question, first, second), span_of(question, second, first)
    return 0 <= start - end - 1 <= (2 if HAN.search(question) else 0)


def _one_name(a: set[str], b: set[str]) -> bool:
    """Two spans name one thing: a shared term, or a shared stem of five letters for inflected words
    ("Кедровце" / "Кедровец")."""
    return bool(a & b) or any(len(x) >= 5 and len(y) >= 5 and x[:5] == y[:5] for x in a for y in b)


def _page_span(spans: list[ReaderAnswer], page: int, title: str, attribute: set[str]) -> ReaderAnswer | None:
    """The best span in a page that is not its own title: one that itself says the asked attribute ("городе
    Верхнеборск" for "в одном городе") before one from a sentence that speaks of it, before any other."""
    own = set(tokenize(title))
    mine = [s for s in spans if s.passage == page and set(tokenize(s.text)) and not set(tokenize(s.text)) <= own]
    ranked = sorted(mine, key=lambda s: (not attribute & set(tokenize(s.text)),
                                         not attribute & set(tokenize(s.sentence))))
    return ranked[0] if ranked else None
