"""Enumeration questions ("list all ...", "перечисли все ...", "列出所有 ..."): they want every item of a set, which
no top-k passage list guarantees, so the router sends them to a full-document read and the answer is a list.

Rules only, per language, anchored on the request itself ("list", "name all", "what are the five", "перечисли",
"какие есть", "列出", "有哪些"); a question that merely contains "all" is not one. Chinese patterns are in simplified
characters; a traditional-character question is folded before they look.
"""

from __future__ import annotations

import re

from stores.chinese_script import simplified

_NUMBER_WORDS = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twelve)"
_PATTERNS: tuple[re.Pattern[str], ...] = (  # English, Russian, Chinese
    re.compile(r"^\s*(?:please\s+)?(?:list|enumerate)\b", re.I),
    re.compile(r"^\s*(?:please\s+)?(?:name|give|show)(?:\s+me)?\s+(?:all|every)\b", re.I),
    re.compile(rf"^\s*(?:what|which|who)\s+(?:are|were)\s+(?:all\s+(?:of\s+)?)?the\s+{_NUMBER_WORDS}\b", re.I),
    re.compile(r"^\s*(?:what|which|who)\s+(?:are|were)\s+all\s+(?:of\s+)?the\b", re.I),
    re.compile(r"^\s*(?:пожалуйста,?\s+)?(?:перечисл\w*|назови\w*\s+все|выпиши\w*|составь\w*\s+список)", re.I),
    re.compile(r"^\s*(?:какие|кто)\s+(?:все|есть)\b", re.I),
    re.compile(r"\bсписок\s+(?:всех|всего)\b", re.I),
    re.compile(r"(?:列出|列举|罗列|请列)"),
    re.compile(r"(?:所有的?|全部的?).{0,12}(?:有哪些|是什么|有什么)"),
    re.compile(r"^.{0,20}有哪(?:些|几)"),
)


_PLURAL_ASKS = (  # a question asking for several things without an explicit request ("Which towns ...?", "какие")
    re.compile(r"^\s*(?:(?:in|at|on|from|of|to|by|with|for)\s+)?(?:what|which)\s+(?:[\w-]+\s+){0,3}?"
               r"[\w-]{3,}(?<![sui])s\b(?<!\bdoes)(?<!\bhas)(?<!\bwas)", re.I),
    re.compile(r"^\s*(?:what|which|who)\s+(?:are|were)\b", re.I),
    re.compile(r"\b(?:какие|каких|каким|какими|которые|перечисл\w*)\b", re.I),
    re.compile(r"哪些|哪几|列出|列举"),
)


def asks_for_several(question: str) -> bool:
    """The question asks for every member of a set, not for one thing: an enumeration request or a plural ask.
    The answer reads both as lists; only an enumeration request is routed to the full-document read (plural asks
    routed there lost list answers: docs/answering.md, issue 57 fifth pass)."""
    folded = simplified(question)
    return bool(enumeration_request(question)) or any(p.search(folded) for p in _PLURAL_ASKS)


def enumeration_request(question: str) -> str | None:
    """The matched request ("list all", ...) when `question` asks for every item of a set, else None."""
    folded = simplified(question)
    for pattern in _PATTERNS:
        match = pattern.search(folded)
        if match:
            return question[match.start() : match.end()].strip()
    return None
