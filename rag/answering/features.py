"""The signals the decision reads, one vector per candidate, all computed by earlier stages or the readings.

Why these: how a candidate was read and how sure the reader was of it (its span score over the no-answer score,
its share among rival spans, its rank), how sure the previous hop was of the value that filled it, whether other
readings agree, how much of what the question asks (its terms weighted by rarity in the index) the candidate's
sentences and page titles speak of, and how much of what it asks of the entities it names (its terms without
theirs: "how long", "founded") the candidate's sentences speak of (a page that names the entity but not the
asked fact is the shape of a question the corpus cannot answer), whether its kind fits what the question asks
for (a year for "when", a number for "how many", a name for "who"), whether it is some page's title (an entity),
whether its passage is about something the question names (a first hop) or about something only another passage
names (a second hop), whether another reading answered with its page's entity (it was led there: a bridge
question's second hop) or its answer is itself some other context page's entity (a bridge to read on from),
whether it is the value a plan's earlier hop found (the bridge of a multi-hop question: the way to its answer,
not the answer), how the CRAG evaluator graded its passage and the context (the grade of the cited passage, the
best grade, the best evidence sentence, the verdict), whether any context page is about something the question
names, how many of the entities the question names no passage read names (a question about something the
documents do not hold), and the route and language, which shift how far the rest can be trusted; for a question
asking for several things, whether the candidate is a list, how long, whether the document laid it out (a bullet
block, a table's column) or it was cut from a sentence (whose edges are a guess), and how many of its items echo
the question's words (the towers of "which towers", 码头 of "哪些码头": a list of the asked kind, where a list of
the places beside the asked things does not) and how many are dates when the question does not ask when (a
chronology's years, read where the reader pointed at one of its entries); and whether its passage is a section of
a longer document rather than a page of its own (the grade, the verdict and a named page mean less there: the
evaluator learned them on pages about one entity each), and whether it stands on the page of a look-alike of an
entity the question names (the sister ship's launch year; a report's section whose heading shares a word with the
asked name is that far less often).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from rag.answering.candidates import (
    READINGS,
    Candidate,
    named_by,
    names_same,
    normal,
    said_terms,
    same_answer,
)
from rag.knowledge.passages import in_section
from rag.reader.names import named_pages, root, roots
from rag.reader.rerank import question_type, span_type
from rag.retrieval.enumeration import asks_for_several
from stores.tokenize import tokenize

FEATURES = (
    "one_pass", "hop_chain", "per_passage", "linked", "yes_no", "compared", "claim", "first_hop", "second_hop",
    "margin", "share", "rank", "hop_margin", "hop_share", "hop_rank", "agree", "support", "cover", "asked_cover",
    "rare_missing", "type_fit", "is_title", "led_to", "leads_on", "hop_value", "in_question", "log_length",
    "graded", "grade", "best_grade", "best_evidence", "verdict_correct", "verdict_incorrect", "named_page",
    "unnamed", "multihop", "ru", "zh", "passages", "asks_list", "list_answer", "log_items", "list_block",
    "items_echo", "items_dated", "in_section", "look_alike",
)


def featurize(candidates: Sequence[Candidate], question: str, signals: dict[str, Any],
              context: Sequence[dict[str, Any]], rarity: Callable[[str], float]) -> None:
    """Fill each candidate's `features` (names in FEATURES). `signals`: verdict, route, language, best_evidence,
    unnamed (the share of the question's entities that no passage read names);
    `rarity`: a term's inverse document frequency in the index."""
    asked = set(tokenize(question))
    weights = {term: rarity(term) for term in asked}
    # the rarest terms: in a small index many tie (each in one document), and taking one of them by the set's order
    # made the feature change from one process to the next; the share of them missing is what that pick averaged
    top = max((w for w in weights.values() if w > 0), default=0.0)
    rarest = sorted(t for t, w in weights.items() if w > 0 and w == top)
    grades = [float(p["grade"]) for p in context if p.get("grade") is not None]
    texts = [normal(f"{p.get('title') or ''} {p['text']}") for p in context]
    titles = {normal(p.get("title") or "") for p in context} - {""}
    found = [(c.text, c.passage.get("id")) for c in candidates]
    hop_values = {normal(hop["answer"]) for c in candidates for hop in c.chain[:-1]} - {""}
    named_page = float(any(named_by(p, asked) for p in context))
    # what the question asks of the entities it names: its terms without theirs ("how long", "the teacher ... born")
    entity_terms = {t for i in named_pages(question, [p.get("title") or "" for p in context])
                    for t in tokenize(context[i].get("title") or "")}
    relation = {root(t): weights[t] for t in sorted(asked - entity_terms)}
    asked_for = question_type(question)
    asks_list = asks_for_several(question)
    asked_roots = roots(question)
    language = signals.get("language", "en")
    for candidate in candidates:
        read = candidate.read
        hop = candidate.chain[-2] if len(candidate.chain) > 1 else {}
        grade = candidate.passage.get("grade")
        terms = set(tokenize(candidate.text))
        others = [c for c in candidates if c.reading != candidate.reading]
        said = said_terms(candidate)
        first, second = named_by(candidate.passage, asked), _bridged(candidate.passage, asked, context)
        candidate.features = {
            "one_pass": float(candidate.reading == "one_pass"),
            "hop_chain": float(candidate.reading == "hop_chain"),
            **{reading: float(candidate.reading == reading) for reading in READINGS},
            "first_hop": float(first),
            "second_hop": float(second),
            "margin": _clip((read.margin or 0.0) / 10.0),
            "share": float(read.confidence if read.confidence is not None else 0.0),
            "rank": float(candidate.rank),
            "hop_margin": _clip((hop.get("margin") or 0.0) / 10.0),
            "hop_share": float(hop.get("share") or 0.0),
            "hop_rank": float(hop.get("rank") or 0.0),
            "agree": float(any(same_answer(candidate.text, o.text) for o in others)),
            "support": min(3.0, float(sum(normal(candidate.text) in t for t in texts)))
            if read.kind == "span" else 0.0,
            "cover": sum(w for t, w in weights.items() if t in said) / (sum(weights.values()) or 1.0),
            "asked_cover": _share_said(relation, said),
            "rare_missing": sum(t not in said for t in rarest) / len(rarest) if rarest else 0.0,
            "type_fit": _type_fit(asked_for, candidate.text) if read.kind == "span" else 0.0,
            "is_title": float(normal(candidate.text) in titles),
            "led_to": float(_led_to(candidate, found)),
            "leads_on": float(_leads_on(candidate, context)),
            "hop_value": float(any(_one_value(candidate.text, value) for value in hop_values)),
            "in_question": float(bool(terms) and terms <= asked and read.kind == "span"),
            "log_length": math.log1p(len(candidate.text)),
            "graded": float(grade is not None),
            "grade": float(grade) if grade is not None else 0.0,
            "best_grade": max(grades, default=0.0),
            "best_evidence": float(signals.get("best_evidence") or 0.0),
            "verdict_correct": float(signals.get("verdict") == "correct"),
            "verdict_incorrect": float(signals.get("verdict") == "incorrect"),
            "named_page": named_page,
            "unnamed": float(signals.get("unnamed") or 0.0),
            "multihop": float(signals.get("route") == "multihop"),
            "ru": float(language == "ru"),
            "zh": float(language == "zh"),
            "passages": float(len(context)),
            "asks_list": float(asks_list),
            "list_answer": float(bool(candidate.items)),
            "log_items": math.log1p(len(candidate.items)),
            "list_block": float(candidate.list_form == "block"),
            "items_echo": _share(candidate.items, lambda item: bool(roots(item) & asked_roots)),
            "items_dated": _share(candidate.items, lambda item: span_type(item) == "year")
            if asked_for != "time" else 0.0,
            "in_section": float(in_section(candidate.passage)),
            "look_alike": float(candidate.look_alike),
        }


# What a question asks for (rag.reader.rerank.question_type) against what a span is (span_type): +1 fits,
# -1 does not, 0 when the question does not say.
_FITS = {"time": {"year"}, "number": {"number", "year"}, "person": {"name"}, "place": {"name"}}


def _type_fit(asked_for: str, text: str) -> float:
    if asked_for not in _FITS:
        return 0.0
    return 1.0 if span_type(text) in _FITS[asked_for] else -1.0


def _share_said(relation: dict[str, float], said: set[str]) -> float:
    """The rarity-weighted share of the question's relation terms that the candidate's sentences hold, one root
    ("длина" / "длиной", "architect" / "architecture") counting as one term; 1 when the question has none."""
    said_roots = {root(t) for t in said}
    total = sum(relation.values())
    return sum(w for t, w in relation.items() if t in said_roots) / total if total else 1.0


def _bridged(passage: dict[str, Any], asked: set[str], context: Sequence[dict[str, Any]]) -> bool:
    """The passage is about something the question does not name but another context passage does."""
    title = normal(passage.get("title") or "")
    if not title or named_by(passage, asked):
        return False
    return any(title in normal(other["text"]) for other in context if other.get("id") != passage.get("id"))


def _led_to(candidate: Candidate, found: Sequence[tuple[str, Any]]) -> bool:
    """Some candidate read from another passage answered with this candidate's page's entity."""
    title = candidate.passage.get("title") or ""
    own = candidate.passage.get("id")
    return any(passage != own and names_same(title, text) for text, passage in found)


def _leads_on(candidate: Candidate, context: Sequence[dict[str, Any]]) -> bool:
    """The candidate's answer is the entity of another context page (a bridge to read on from)."""
    own = candidate.passage.get("id")
    return candidate.read.kind == "span" and any(
        p.get("id") != own and names_same(p.get("title") or "", candidate.text) for p in context)


def _share(items: Sequence[str], test: Callable[[str], bool]) -> float:
    """The share of a list's items that pass `test`; 0 for no list."""
    return sum(map(test, items)) / len(items) if items else 0.0


def _one_value(text: str, value: str) -> bool:
    """The same value in two wordings, neither a small part of the other ("Кордон" / "ЦОД «Кордон»", not "中心" /
    "水质监测中心")."""
    text = normal(text)
    return same_answer(text, value) and 2 * min(len(text), len(value)) >= max(len(text), len(value))


def _clip(value: float, bound: float = 3.0) -> float:
    return max(-bound, min(bound, float(value)))


RULES = ("yes_no", "compared")
# The reader's rules (yes / no about two subjects or a comparison, "A or B") answer too few training questions to
# learn when they are right: the model reads them as one kind, "rule", with its own intercept but none of the
# per-reading weights below. Their answers go through the same threshold as every other.
MODEL_READINGS = ("one_pass", "hop_chain", "per_passage", "linked", "claim")
INTERACTING = ("margin", "share", "rank", "cover", "asked_cover", "rare_missing", "first_hop", "second_hop", "grade",
               "agree", "log_length", "type_fit", "led_to", "leads_on")
IN_SECTION = ("grade", "best_grade", "verdict_incorrect", "first_hop", "named_page", "look_alike")
# What the decision reads: the signals, each of INTERACTING per reading (a margin means more in one reading than in
# another), and each of IN_SECTION for a section's passage, so one linear model can weigh them apart.
MODEL_FEATURES = (*(f for f in FEATURES if f not in RULES), "rule",
                  *(f"{reading}*{name}" for reading in MODEL_READINGS for name in INTERACTING),
                  *(f"in_section*{name}" for name in IN_SECTION))


def model_vector(features: dict[str, float]) -> list[float]:
    """The candidate's features in MODEL_FEATURES order (a missing signal counts 0)."""
    value = {name: float(features.get(name, 0.0)) for name in FEATURES}
    value["rule"] = sum(value[name] for name in RULES)
    base = [value[name] for name in FEATURES if name not in RULES] + [value["rule"]]
    return (base + [value[reading] * value[name] for reading in MODEL_READINGS for name in INTERACTING]
            + [value["in_section"] * value[name] for name in IN_SECTION])
