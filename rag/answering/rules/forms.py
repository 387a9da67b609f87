"""Answers to the two question forms a span pointer cannot handle alone: yes / no, and "A or B".

Options: an option compared by its values (compare.py) is cut from its page as written (option_answer); an
"A or B" question no values decide is read like any other question, by the span readings and the decision (the
option the span head preferred, answered by a rule, lost answers on unread data: cragraph_lab.rule_ablation).
Yes / no: see answer_yesno; a question it cannot decide gets no answer, never a default.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from rag.answering.rules.compare import Compared, page_of
from rag.answering.rules.compared_claims import compared_claim, paired_claim
from rag.answering.rules.coordinated import coordinated
from rag.answering.rules.hidden_question import hidden_claim, names_value, within
from rag.reader import grammar
from rag.reader.questions import EN_AUX, _capitalized_run
from rag.reader.types import Passage, ReaderAnswer
from stores.tokenize import tokenize

YES_NO = {"en": ("yes", "no"), "ru": ("да", "нет"), "zh": ("是", "否")}
SINGLE_CLAIM = "claim"  # the rule of a yes / no answer read from one claim's span (the claim reading judges it then)
OPENING_CHARS = 400  # the definitional opening of a passage ("X is an American film director ...")


def _occurrences(text: str, option: str) -> list[tuple[int, int]]:
    variants = list(dict.fromkeys([option, re.sub(r"^(?:the|a|an)\s+", "", option, flags=re.I)]))
    lowered = text.lower()
    out = []
    for v in variants:
        for m in re.finditer(re.escape(v.lower()), lowered):
            out.append(m.span())
    return out


def _entities(question: str) -> list[str]:
    body = question.strip().rstrip("?？ ")
    if (aux := EN_AUX.match(body)) and body[aux.end():aux.end() + 1].isspace():
        body = body[aux.end():].lstrip()
        body = body[5:] if body.lower().startswith("both ") else body
    if " and " not in body:
        return []
    first, rest = body.split(" and ", 1)
    words = rest.split()
    second = " ".join(words[: _capitalized_run(words)])
    first = first.strip(" ,")
    return [e for e in (first, second) if e]


def answer_yesno(
    question: str, passages: list[Passage], candidates: list[ReaderAnswer], language: str,
    read: Callable[[str], ReaderAnswer | None],
) -> ReaderAnswer | None:
    """A claim about two joined subjects, each with its page, by each subject's part read alone (coordinated.py:
    "A и B оба родились в W?" holds when "A родились в W?" and "B родились в W?" do); a comparison ("Is A longer
    than B?") by the values of the pages (rag.answering.rules.compared_claims); "Are A and B both
    X?" by X's words in the opening of each one's passage, else by what the reader points at in each page; any
    other yes / no question is read as the claim it makes: `read` answers the question the claim hides
    (hidden_question.py: "Where was she born?" for "Was she born in Tromsø?"), and the claim holds when that
    answer names the claimed value. Nothing to decide from (no value to hide, no rule that applies): None, no
    default answer."""
    yes, no = YES_NO.get(language, YES_NO["en"])

    def answered(holds: bool, page: int, sentence: str) -> ReaderAnswer:
        return ReaderAnswer(yes if holds else no, "yes" if holds else "no", page, sentence, -1, -1, 0.0)

    def judged(holds: bool, span: ReaderAnswer) -> ReaderAnswer:
        """The answer decided by a span the reader read: its page, sentence, scores and margin."""
        return replace(answered(holds, span.passage, span.sentence), score=span.score, span_score=span.span_score,
                       sentence_score=span.sentence_score, margin=span.margin)

    def sentence_of(page: int) -> str:
        return next((c.sentence for c in candidates if c.passage == page), "")

    joined = coordinated(question, language)
    if joined is not None and all(page_of(subject, passages) is not None for subject in joined.subjects):
        # each subject read alone, on its own page; a claim of two subjects is no comparison of one with the other
        decided = _joined_claim([read(part) for part in joined.parts], joined.same, yes)
        if decided is not None:
            return judged(*decided)
    compared = compared_claim(question, passages)
    if compared is not None:
        return answered(compared[0], compared[1], sentence_of(compared[1]))
    typed = _both_of_a_kind(question, passages, language)
    if typed is not None and typed[0]:
        return answered(True, typed[1], sentence_of(typed[1]))
    paired = paired_claim(question, passages, candidates)
    if paired is not None:
        return answered(paired[0], paired[1], sentence_of(paired[1]))
    if typed is not None:
        return answered(False, typed[1], sentence_of(typed[1]))
    hidden = hidden_claim(question, [p.title for p in passages], language)
    if hidden is not None:
        found = read(hidden.question)
        if found is not None and found.kind == "span":
            holds = names_value(found.text, hidden.value) or within(found, passages, hidden.value)
            return replace(judged(holds, found), rule=SINGLE_CLAIM)
    return None


def _joined_claim(parts: list[ReaderAnswer | None], same: bool, yes: str) -> tuple[bool, ReaderAnswer] | None:
    """Whether a claim about two subjects holds, from each subject's part read alone (coordinated.py): "the same"
    when the two answers name one thing, "both" when each part holds (one part that fails is enough for "no");
    with the answer that decides it, or None when the parts leave it open."""
    if same:
        spans = [p for p in parts if p is not None and p.kind == "span"]
        if len(spans) < len(parts):
            return None
        first, second = spans
        return (names_value(_first_clause(first.text), _first_clause(second.text)),
                min(spans, key=lambda p: p.margin or 0.0))
    decided = [p for p in parts if p is not None and p.rule in ("yes_no", SINGLE_CLAIM)]
    failed = [p for p in decided if p.text != yes]
    if failed:
        return False, failed[0]
    if len(decided) < len(parts):
        return None
    return True, min(decided, key=lambda p: p.margin or 0.0)


_CLAUSE_BREAK = re.compile(r",|，|、|;|\sи\s|和")


def _first_clause(span: str) -> str:
    """A span up to its first comma or conjunction: the one value a "the same" question compares ("Заречье, где
    училась в школе" -> "Заречье")."""
    return _CLAUSE_BREAK.split(span, maxsplit=1)[0]


def _both_of_a_kind(question: str, passages: list[Passage], language: str) -> tuple[bool, int] | None:
    """"Are A and B both board games?": whether the kind's words stand in the opening of each one's passage."""
    entities = _entities(question) if language == "en" else []
    if not entities or grammar.says(question, grammar.words("SAME")):
        return None
    attribute = set(tokenize(question))
    for entity in entities:
        attribute -= set(tokenize(entity))
    found = [passages[i] for i in (page_of(e, passages) for e in entities) if i is not None]
    if not attribute or len(found) < len(entities):
        return None
    covered = [attribute <= set(tokenize(p.title + " " + p.text[:OPENING_CHARS])) for p in found]
    return all(covered), passages.index(found[0])


def option_answer(compared: Compared, passages: list[Passage]) -> ReaderAnswer:
    """The compared option as it is written in its passage (or its title), with the sentence around it."""
    passage = passages[compared.passage]
    spans = _occurrences(passage.text, compared.option)
    if spans:
        start, end = spans[0]
        sentence = _sentence_around(passage.text, start)
        return ReaderAnswer(passage.text[start:end], "span", compared.passage, sentence, start, end, 0.0)
    title_spans = _occurrences(passage.title, compared.option)
    start, end = title_spans[0] if title_spans else (0, len(passage.title))
    text = passage.title[start:end] or compared.option
    return ReaderAnswer(text, "span", compared.passage, _sentence_around(passage.text, 0), start, end, 0.0, True)


def _sentence_around(text: str, offset: int) -> str:
    start = max(text.rfind(". ", 0, offset) + 2, 0) if offset else 0
    end = text.find(". ", offset)
    return text[start : end + 1 if end >= 0 else len(text)].strip()
