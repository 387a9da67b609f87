"""The rule readings: the two question forms a span pointer cannot answer alone, yes / no and "A or B", answered
from what the reader points at (forms.py and the modules it calls); any other question is the reader's spans.

Why here: the reader gives spans and scores; the rules call it (a claim is read as the question it hides), so they
sit above it, beside the other readings, and every reading calls one function, `read_ranked`, in place of the
reader's own. A rule's answer comes alone; a yes / no question no rule decides gets no answer, never a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from rag.answering.rules.compare import compare_options, comparison_kind, mentioned, page_of
from rag.answering.rules.dated import dated_answer
from rag.answering.rules.forms import answer_yesno, option_answer
from rag.reader.folding import as_written, fold
from rag.reader.questions import QuestionForm, question_form
from rag.reader.types import Passage, ReaderAnswer
from stores.chinese_script import simplified

if TYPE_CHECKING:  # the reader module imports torch; loaded on first use only
    from rag.reader.reader import Reader


RULE_FORMS = ("yesno", "options")  # the question forms a rule may answer


def read_ranked(reader: Reader, question: str, passages: Sequence[Passage | str], language: str,
                top: int = 3) -> list[ReaderAnswer]:
    """The rule's answer alone when the question's form has one, else the reader's best spans (at most `top`),
    cut from the passages as written."""
    asked = simplified(question)
    form = question_form(asked, language)
    given = [p if isinstance(p, Passage) else Passage(str(p)) for p in passages]
    if form.kind not in RULE_FORMS or not any(p.text.strip() for p in given) or not question.strip():
        return reader.read_ranked(question, given, language, top)  # folds the passages itself
    folded = fold(given, question)
    applies, ruled = _by_rule(reader, asked, form, folded, language)
    if not applies:
        return reader.read_ranked(question, given, language, top)
    return [] if ruled is None else [as_written(ruled, given, folded)]


def _by_rule(reader: Reader, question: str, form: QuestionForm, passages: list[Passage],
             language: str) -> tuple[bool, ReaderAnswer | None]:
    """(whether a rule reads this question, its answer or None) over passages already folded."""
    from rag.reader.reader import no_answer_margin

    if form.kind == "yesno":
        scored = reader.score(question, passages, language)
        decided = answer_yesno(question, passages, reader.spans(scored), language,
                               lambda hidden: _best(reader, hidden, passages, language))
        if decided is not None:  # a hidden question's span keeps the margin over its own no-answer score
            margin = decided.margin if decided.margin is not None else (
                no_answer_margin(scored, decided) if decided.span_score else None)
            decided = replace(decided, rule=decided.rule or "yes_no", margin=margin)
        return True, decided
    if form.kind != "options":
        return False, None
    paged = all(page_of(option, passages) is not None for option in form.options)
    if paged or all(mentioned(option, passages) for option in form.options):
        compared = compare_options(question, form.options, passages)
        if compared is not None:
            return True, replace(option_answer(compared, passages), rule="compared")
    kind = comparison_kind(question)
    if kind is not None and kind[0] == "time" and len(form.options) == 2:  # events the documents date
        dated = dated_answer(reader, form.options, passages, language, kind[1])
        if dated is not None:
            return True, dated
    return False, None


def _best(reader: Reader, question: str, passages: list[Passage], language: str) -> ReaderAnswer | None:
    """The one answer to a question the rules ask of the reader (a claim's hidden question, one part of a
    joined claim), itself read by rule when it has a rule's form."""
    applies, ruled = _by_rule(reader, question, question_form(question, language), passages, language)
    return ruled if applies else reader.read(question, passages, language)
