"""Follow-up questions on a thread, resolved into standalone questions without an LLM.

"and where was he born?" cannot be retrieved: its subject is in the previous turn. A question is a follow-up
when it opens with a connector ("and", "what about", "а", "и", "那", "还有") or has a third-person pronoun and
few content words of its own (no name of its own). It is rewritten against the previous turn: the pronoun is
replaced by the previous answer when that is a short name (for he/she/they), else by the previous question's key
entity (for it, or when the answer is not a name); "what about X?" asks the previous question about X; a
connector without a pronoun gets the previous key entity appended. Deterministic, so the offline path and the
tests know what is retrieved.

"what about X?" keeps the previous question's predicate only where X fits its subject. When that subject is a
person an earlier turn answered ("Who is the head of the Berlin office?" -> Anna Schmidt; "Where was Anna Schmidt
born?"), X may be the person's counterpart ("what about Carlos?": X in the person's place) or the counterpart of
what the earlier question named ("what about the Austin office?": the earlier role with X, "Where was the head
of the Austin office born?"). X that is neither is not put in a person's place ("Where was the Austin office
born?"): the question is asked as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.retrieval.multi_query import content_words, keyword_form
from stores.chinese_script import simplified
from stores.text import language_of

MAX_OWN_CONTENT_WORDS = 3  # a pronoun question with more words of its own is taken as standalone

# Connectors that open a follow-up; the longest match is stripped ("what about" before "what").
_CONNECTORS = (
    "and what about", "and how about", "what about", "how about", "and also", "and", "also",
    "а как насчёт", "а как насчет", "а что насчёт", "а что насчет", "а что с", "а", "и ещё", "и еще", "и",
    "那么", "还有", "那",
)
# "what about X?": the previous question asked about X instead.
_ABOUT = ("and what about", "and how about", "what about", "how about", "а как насчёт", "а как насчет", "а что насчёт",
          "а что насчет", "а что с")
PERSON_PRONOUNS = frozenset({
    "he", "she", "him", "her", "his", "hers", "they", "them", "their",
    "он", "она", "его", "её", "ее", "ему", "ей", "него", "неё", "нее", "нему", "ней", "им", "ним", "они", "их",
})
THING_PRONOUNS = frozenset({"it", "its", "оно", "это"})
_POSSESSIVE = frozenset({"his", "her", "its", "their"})
_ZH_PERSON = ("他们", "她们", "他", "她")
_ZH_THING = ("它们", "它")
_ZH_PRONOUN = re.compile("(?<!其)(他们|她们|它们|他|她|它)")  # 其他 is "other", not "he"
_ZH_AFTER_NA = "，,、 他她它"  # 那 opens a follow-up before a pause or a pronoun ("那他呢？")
_WORD = re.compile(r"\w+", re.UNICODE)
_CITATION = re.compile(r"\s*\[\d{1,3}\]")
# A run of capitalized words, allowing short lower-case joiners inside ("Institute for Physical Problems").
_NAME = re.compile(
    r"(?:[A-ZА-ЯЁ][\w'’-]*)(?:\s+(?:(?:of|for|the|de|von|van|and|и)\s+)*[A-ZА-ЯЁ][\w'’-]*)*", re.UNICODE
)


@dataclass(frozen=True)
class Resolution:
    """The standalone question, and how it was made ("rule: ..." or "" when the question was left as it is)."""

    question: str
    how: str = ""

    @property
    def rewritten(self) -> bool:
        return bool(self.how)


def clean_answer(answer: str) -> str:
    """The answer text without its [n] citation markers."""
    return _CITATION.sub("", answer or "").strip()


def _connector(question: str) -> str | None:
    lowered = simplified(question.lower())  # the Chinese connectors are in simplified characters
    for connector in _CONNECTORS:
        if lowered.startswith(connector):
            rest = lowered[len(connector):]
            if connector == "那" and rest and rest[0] not in _ZH_AFTER_NA:  # 那不勒斯 (Naples) is no "then"
                continue
            if not rest or not rest[0].isalnum() or ord(connector[-1]) >= 0x2E80:  # CJK: no word boundary
                return connector
    return None


def _pronouns(question: str) -> list[re.Match[str]]:
    return [m for m in _WORD.finditer(question) if m.group().lower() in PERSON_PRONOUNS | THING_PRONOUNS]


def _has_own_name(question: str) -> bool:
    """A capitalized word after the first (a name of the question's own: "where was Kapitsa born")."""
    words = _WORD.findall(question)
    return any(w[:1].isupper() for w in words[1:] if w.lower() not in PERSON_PRONOUNS | THING_PRONOUNS)


def is_followup(question: str) -> bool:
    """Whether `question` leans on an earlier turn (see the module's doc)."""
    text = question.strip()
    if not text:
        return False
    if _connector(text):
        return True
    if language_of(text) == "zh":
        return bool(_ZH_PRONOUN.search(simplified(text))) and len(text) <= 16
    if not _pronouns(text) or _has_own_name(text):
        return False
    own = [w for w in content_words(text) if w not in PERSON_PRONOUNS | THING_PRONOUNS]
    return len(own) <= MAX_OWN_CONTENT_WORDS


def key_entity(question: str) -> str:
    """The previous question's subject: its longest capitalized name after the first word, else its keywords."""
    text = question.strip()
    first = _WORD.match(text)
    start = first.end() if first else 0
    names = [m.group().strip() for m in _NAME.finditer(text, start)]
    names = [n for n in names if n.lower() not in PERSON_PRONOUNS | THING_PRONOUNS]
    if names:
        return max(names, key=len)
    return keyword_form(text).rstrip("?？!. ")


def name_like(answer: str) -> bool:
    """A short answer that names something (a person, a place), not a number, a sentence or an abstention."""
    text = clean_answer(answer)
    if not text or any(ch.isdigit() for ch in text):
        return False
    if language_of(text) == "zh":
        return len(text) <= 10
    words = text.split()
    return len(words) <= 5 and words[0][:1].isupper()


def _referent(pronoun: str, previous_question: str, previous_answer: str, answered: bool) -> str:
    answer = clean_answer(previous_answer) if answered and name_like(previous_answer) else ""
    entity = key_entity(previous_question)
    if pronoun in PERSON_PRONOUNS or pronoun in _ZH_PERSON:
        return answer or entity
    return entity or answer


def _ask(text: str, end: str) -> str:
    return text.strip().rstrip("?？").strip() + end


def _stem(text: str) -> str:
    return text.strip().rstrip("?？!.。 ").strip()


def resolve(question: str, previous_question: str, previous_answer: str = "", answered: bool = True,
            earlier: Sequence[tuple[str, str]] = ()) -> Resolution:
    """`question` as a standalone question given the previous turn (unchanged when it is not a follow-up);
    `earlier`: the (standalone question, answer) turns before it, oldest first, for "what about X?"."""
    text = question.strip()
    if not previous_question.strip() or not is_followup(text):
        return Resolution(text)
    end = "？" if text.endswith("？") else "?"
    connector = _connector(text)
    rest = text[len(connector):].lstrip(" ,，、") if connector else text
    if language_of(text) == "zh":
        found = _ZH_PRONOUN.search(simplified(rest))  # same offsets in `rest`
        if found:
            referent = _referent(found.group(), previous_question, previous_answer, answered)
            rewritten = rest[: found.start()] + referent + rest[found.end():]
            return Resolution(rewritten, f"rule: {rest[found.start():found.end()]} -> {referent}")
        entity = key_entity(previous_question)
        return Resolution(_ask(f"{entity}{_stem(rest)}", end), f"rule: + {entity}")
    pronouns = _pronouns(rest)
    if pronouns:
        match = pronouns[0]
        word = match.group().lower()
        referent = _referent(word, previous_question, previous_answer, answered)
        replacement = f"{referent}'s" if word in _POSSESSIVE and language_of(text) == "en" else referent
        rewritten = rest[: match.start()] + replacement + rest[match.end():]
        return Resolution(_capitalized(rewritten), f"rule: {match.group()} -> {referent}")
    entity = key_entity(previous_question)
    if connector in _ABOUT and rest:
        # "what about Moscow?" after "What is the population of Paris?": the same question about Moscow
        subject = _stem(rest)
        if entity and entity in previous_question:
            role = _answered_role(entity, earlier)
            if role is not None:  # the subject is a person an earlier turn found: X must fit a person's place
                fitted = _in_role(subject, *role)
                if fitted is None:
                    return Resolution(text)
                subject = fitted
            return Resolution(previous_question.replace(entity, subject, 1).strip(), f"rule: {entity} -> {subject}")
        return Resolution(_ask(f"{_stem(previous_question)} {subject}", end), f"rule: + {subject}")
    return Resolution(_capitalized(_ask(f"{_stem(rest)} {entity}", end)), f"rule: + {entity}")


_ROLE_QUESTION = re.compile(r"^\s*(?:who|whom)\s+(?:is|was|are|were)\s+(?P<role>.+?)\s*[?？]?\s*$", re.I)
_DETERMINERS = frozenset({"the", "a", "an"})


def _answered_role(person: str, earlier: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """(role, named) when `person` answered an earlier "Who is <role>?" (the latest such turn): the role as the
    question put it and the name the role holds ("the head of the Berlin office", "Berlin"); else None."""
    for question, answer in reversed(earlier):
        found = _ROLE_QUESTION.match(question)
        if found and clean_answer(answer) == person:
            return found.group("role"), key_entity(question)
    return None


def _in_role(subject: str, role: str, named: str) -> str | None:
    """What "what about <subject>?" stands for in a person's place: a bare name is a person ("Carlos"); a name
    with words of the role ("the Austin office" for "the head of the Berlin office") is the role's counterpart,
    "the head of the Austin office"; anything else does not fit (None)."""
    words = _WORD.findall(subject)
    names = [w for w in words if w[:1].isupper()]
    others = [w.lower() for w in words if not w[:1].isupper() and w.lower() not in _DETERMINERS]
    if names and not others:
        return subject
    role_words = {w.lower() for w in _WORD.findall(role)}
    if names and named and named in role and set(others) <= role_words:
        return role.replace(named, " ".join(names), 1)
    return None


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
