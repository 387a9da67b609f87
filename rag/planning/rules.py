"""Rule-based decomposition of typical multi-hop questions, the fallback when no LLM gives a valid plan.

Three shapes cover most bridge and comparison questions:
- bridge ("Who founded the label that released Harbour Lights?"): the rightmost noun phrase with a relative clause
  running to the end of the question is asked first and its answer fills a slot in the rest. Repeated, so
  nested clauses become a chain ("... the state that borders the state where X died" -> 3 hops).
- role bridge ("In which city was the director of Silver Harbor born?"): "the <role> of <Name>" is asked
  first ("Who is the director of Silver Harbor?") when the rest of the question still asks something of it (a
  bare "What is the capital of France?" stays one hop).
- comparison ("Which is older, A or B?", "Are A and B both ...?"): one independent sub-question per item.
Russian and Chinese bridge shapes: rules_ru_zh.py. A question no shape matches gets no rule plan (the caller
degrades to single-hop).
"""

from __future__ import annotations

import re

from rag.planning.plan import Decomposition, SubQuestion
from rag.planning.rules_ru_zh import other_language_decomposition

_RELATIVE = re.compile(
    r"(?P<np>\b(?:the|a|an)\s+(?:[\w'\-]+\s+){0,5}?[\w'\-]+)\s+"
    r"(?P<rel>that|which|who|whom|whose|where|when|in which|from which|by which)\s+"
    r"(?P<clause>[^?]{3,}?)\s*\??$",
    re.IGNORECASE,
)
_COMPARISON = re.compile(r"^(?P<head>.+?),\s*(?P<a>[^,]+?)\s+or\s+(?P<b>[^,?]+?)\s*\?*$", re.IGNORECASE)
_BOTH = re.compile(
    r"^(?:are|were|is|was|do|did|does)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+both\s+(?P<rest>[^?]+)\??$",
    re.IGNORECASE,
)
_ROLE_OF = re.compile(
    r"\bthe\s+(?P<role>[a-z][\w'\-]*)\s+of\s+"
    r"(?P<name>(?:the\s+)?(?:(?:film|movie|novel|book|band|song|album|company|city|river|country|series|show|game"
    r"|play|opera|group|team|club)\s+)?[A-Z0-9][\w'\-.]*(?:\s+(?:[A-Z0-9][\w'\-.]*|of|the|de|and|&))*[\w'.\-]*)"
)
# A role is someone or something that holds it: an agent noun (director, founder, author, president, ...) or a
# relation of persons and places; "the name / time / kind of X" asks about X itself.
_ROLE_SUFFIXES = ("er", "or", "ist", "ian", "ent", "ant", "ess")
_ROLES = frozenset(
    [
        "wife", "husband", "spouse", "son", "daughter", "father", "mother", "parent", "child", "children",
        "brother", "sister", "sibling", "partner", "king", "queen", "prince", "princess", "heir", "successor",
        "predecessor", "owner", "chief", "head", "leader", "captain", "coach", "star", "capital", "birthplace",
        "hometown", "headquarters", "chairman", "chairwoman", "ceo", "founder", "mayor"
    ]
)
_NOT_ROLES = frozenset([
    "number", "member", "quarter", "center", "centre", "winter", "summer", "character", "matter", "letter", "order",
    "error"
])


def _is_role(word: str) -> bool:
    agent = word.endswith(_ROLE_SUFFIXES) and not word.endswith("ment") and word not in _NOT_ROLES and len(word) > 4
    return word in _ROLES or agent


# Words that ask without saying what: a question made only of these (and the slot) asks nothing of the slot.
_QUESTION_WORDS = frozenset(
    [
        "what", "which", "who", "whom", "whose", "where", "when", "how", "is", "was", "are", "were", "do", "does",
        "did", "the", "a", "an", "in", "on", "at", "of", "to", "for", "by", "with", "from"
    ]
)
MAX_HOPS = 4


def rule_decomposition(question: str) -> Decomposition | None:
    """A valid DAG for a recognised shape, or None."""
    text = " ".join(question.split())
    return _comparison(text) or _bridge(text) or _role_bridge(text) or other_language_decomposition(text)


def _comparison(text: str) -> Decomposition | None:
    both = _BOTH.match(text)
    if both:
        rest = both.group("rest")
        items = [both.group("a"), both.group("b")]
        return Decomposition(
            sub_questions=[
                SubQuestion(id=f"q{i}", text=f"Is {item} {rest}?") for i, item in enumerate(items, start=1)
            ]
        )
    match = _COMPARISON.match(text)
    if not match:
        return None
    head = match.group("head").rstrip(" ,")
    subject = re.sub(
        r"^(which|who|what)\s+(one\s+|of these\s+|of the two\s+)?", "", head, flags=re.IGNORECASE
    )
    items = [match.group("a").strip(), match.group("b").strip()]
    if any(len(item.split()) > 8 for item in items):
        return None
    return Decomposition(
        sub_questions=[
            SubQuestion(id=f"q{i}", text=f"{item}: {subject}") for i, item in enumerate(items, start=1)
        ]
    )


def _bridge(text: str) -> Decomposition | None:
    """Peel relative clauses from the right; each peeled phrase is a hop whose answer fills the next."""
    hops: list[str] = []
    rest = text
    while len(hops) < MAX_HOPS - 1:
        match = _last_relative(rest)
        if not match:
            break
        inner = rest[match.start("np") :].rstrip(" ?")
        outer = rest[: match.start("np")].rstrip()
        if len(outer.split()) < 2:
            break
        verb = _main_verb(outer, match.group("clause"))
        if verb:
            inner = inner[: -len(verb)].rstrip()
        hops.append(inner)
        rest = f"{outer} {{x{len(hops)}}}{f' {verb}' if verb else ''}?"
    if not hops:
        return None
    # hops[0] is the innermost phrase (no slot); hop i uses {x<i>} and produces {x<i+1>}.
    nodes = [
        SubQuestion(id=f"q{i}", text=hop, deps=[f"q{i - 1}"] if i > 1 else [], slot=f"x{i}")
        for i, hop in enumerate(hops, start=1)
    ]
    nodes.append(SubQuestion(id=f"q{len(hops) + 1}", text=rest, deps=[f"q{len(hops)}"]))
    return Decomposition(sub_questions=nodes)


_DO = frozenset(["did", "does", "do"])
_BE_HAVE = frozenset(["was", "were", "is", "are", "has", "have", "had"])
_PARTICLES = frozenset(["out", "up", "off", "in", "on", "down", "over", "away", "back", "about", "around", "through"])
_BEFORE_A_CLAUSE_VERB = frozenset(["to", "it", "he", "she", "they", "we", "i", "you", "who", "that", "which"])
_IRREGULAR_PAST = frozenset([
    "born", "built", "made", "held", "sold", "won", "led", "run", "ran", "set", "put", "found", "bought", "taught",
    "became", "began", "begun", "wrote", "lent", "took", "gave", "kept", "left", "lost", "paid", "sent", "spent",
    "grew", "drew", "threw", "knew", "saw", "met", "rose", "fell", "shot", "hit", "cut", "came", "went",
])


def _main_verb(outer: str, clause: str) -> str:
    """The question's own verb when the relative clause ends with it: after an inverted auxiliary ("When was",
    "Which university did") the subject, the noun phrase with its clause, is followed by the main verb, so in
    "When was the engineer who designed the bridge born?" "born" asks of the engineer, and in "Which university
    did the engineer who designed the bridge attend?" "attend" does. After "did" it is any lower-case last word;
    after "was" / "has" a participle, and only when the clause keeps a verb of its own ("the lake that her home
    overlooked" ends with the clause's verb, not the question's). A particle ("come out"), an infinitive ("to
    function") or a verb after a pronoun ("when it sank") stays in the clause."""
    aux = outer.split()[-1].lower()
    words = clause.split()
    last = words[-1] if len(words) > 1 else ""
    if not last.isalpha() or not last.islower() or aux not in _DO | _BE_HAVE or last in _PARTICLES \
            or words[-2].lower() in _BEFORE_A_CLAUSE_VERB:
        return ""
    if aux in _DO:
        return "" if _past(last) else last
    return last if _past(last) and any(_past(w) or _present(w) for w in words[:-1]) else ""


def _past(word: str) -> bool:
    return word.islower() and (word.endswith(("ed", "en", "wn")) or word in _IRREGULAR_PAST)


def _present(word: str) -> bool:
    return word.islower() and word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3


def _role_bridge(text: str) -> Decomposition | None:
    """"<question about> the <role> of <Name>": who holds the role first, then the question about them."""
    for match in _ROLE_OF.finditer(text):
        if not _is_role(match.group("role").lower()):
            continue
        name = match.group("name").strip()
        after = text[match.end():].lstrip()
        outer = f"{text[: match.start()].rstrip()} {{x1}}{'' if after[:1] in ('?', '') else ' '}{after}".strip()
        asked = [w for w in re.findall(r"[\w'\-]+", outer.replace("{x1}", " ").lower()) if w not in _QUESTION_WORDS]
        if not asked or len(name.split()) > 8:
            continue
        role = match.group("role")
        return Decomposition(sub_questions=[
            SubQuestion(id="q1", text=f"Who or what is the {role} of {name}?", slot="x1"),
            SubQuestion(id="q2", text=outer if outer.endswith("?") else f"{outer}?", deps=["q1"]),
        ])
    return None


def _last_relative(text: str) -> re.Match[str] | None:
    """The relative-clause phrase that starts furthest right and runs to the end of the text."""
    best = None
    for start in [m.start() for m in re.finditer(r"\b(?:the|a|an)\s", text, re.IGNORECASE)]:
        match = _RELATIVE.match(text, start)
        if match and match.start("np") == start and "{x" not in match.group("np"):
            best = match
    return best
