"""A yes / no claim read as the question it hides: "Was Tamsin Verrow born in Rookstead?" is "Where was Tamsin
Verrow born?" with "Rookstead" claimed as its answer.

Why: the span reader was trained on questions that ask for a span. Given the claim itself it points at whatever
the claim's sentence holds ("1960" for the claimed birthplace, a distractor's "born in Rookstead"), so deciding
from its span said "no" to nearly every claim. Given the hidden question it points at the page's own answer,
which either names the claimed value (yes) or names another one (no).

The claimed value is the last name the question gives after its subject (the first name: a page title the
question names, a capitalised run, a quoted title, a Chinese place name); the hidden question replaces it, with
the preposition before it, by a question word ("where" after "in" / "в" / "在", else "what" / "что" / "谁" /
"什么").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.reader.names import named_pages, root
from rag.reader.questions import EN_AUX
from rag.reader.types import Passage, ReaderAnswer
from stores.ner import chinese_tagged, lac_name, russian_person, russian_predicate
from stores.scripts import HAN
from stores.tokenize import tokenize

WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_QUOTED = re.compile(r"«[^»]{1,80}»|“[^”]{1,80}”|\"[^\"]{1,80}\"|《[^》]{1,40}》|「[^」]{1,40}」")
_ZH_PLACE = re.compile(r"[\u4e00-\u9fff]{2}(?:市|县|镇|省|区|村|州|乡|岛|港)(?![\u4e00-\u9fff]?[市县镇省区村州乡岛港])")
_EN_ARTICLE = re.compile(r"\s+(?:the|a|an)$", re.I)
_EN_PLACE_PREP = re.compile(r"\s+(?:in|at|near)$", re.I)
RU_LEAD = re.compile(r"^(?:правда|верно)(?:\s+ли)?\s*,?\s*(?:что\s+)?", re.I)  # "Правда ли, что ..."
_RU_LI = re.compile(r"\s+ли(?=\s|$)", re.I)
RU_WORD_LI = re.compile(r"^(\w+)\s+ли\b", re.I)  # "Родился ли ...": the first word is the verb
_RU_PLACE_PREP = re.compile(r"\s+(?:в|во|на)(?:\s+[а-яё]+)?$")  # "в Ольховце", "в деревне Сухая Ветла"
_ZH_TAIL = re.compile(r"吗?[？?]?$")
_ZH_PLACE_BEFORE = ("在", "于", "从", "到", "自")


@dataclass(frozen=True)
class Claim:
    """The claimed value as the question writes it, and the question that hides it."""

    value: str
    question: str


def hidden_claim(question: str, titles: Sequence[str], language: str) -> Claim | None:
    """The claim's value and the question it hides, or None when the question names no value after its
    subject ("Is it open?"): the last name it gives, or for Chinese a value that is no name, the object of its
    last verb."""
    names = _names(question, titles, language)
    if len(names) < 2:
        if HAN.search(question):
            return _zh_object_claim(question)
        return _en_object_claim(question, names) if language == "en" else None
    start, end = names[-1]
    if language == "ru" and not HAN.search(question):
        # «в Ольховецком политехническом институте»: the words after the last name belong to it
        tail = question[end:].rstrip(" ?？.!")
        if tail and not any(w[:1].isupper() for w in tail.split()):
            end += len(tail)
    hidden = _hide(question, start, end, language)
    if not hidden:
        return None
    return Claim(question[start:end], hidden)


_ZH_ASKING = re.compile(r"是否|是不是")
_EN_PREPOSITIONS = frozenset({"in", "on", "at", "by", "for", "from", "with", "to", "of", "into", "as", "near"})
_EN_ARTICLES = frozenset({"the", "a", "an"})


def _en_object_claim(question: str, names: Sequence[tuple[int, int]]) -> Claim | None:
    """An English claim whose value is no name ("Did Marie Curie discover polonium?"): auxiliary, subject (its one
    name), verb, then the value (after a preposition, which stays in the hidden question): "What did Marie Curie
    discover?", "When was X founded?" for a year, "What is X?" for "Is X a lighthouse?"."""
    aux = EN_AUX.match(question)
    if aux is None or len(names) != 1:
        return None
    start, end = names[0]
    if question[aux.end():start].strip().lower() not in ("", "the"):
        return None  # the name is not the subject right after the auxiliary
    words = question[end:].strip(" ?？.!").split()
    if len(words) < 2:
        return None
    verb, rest = words[0], words[1:]
    if verb.lower() in _EN_ARTICLES:  # "Is X a lighthouse?": no verb, the value is what X is
        verb, rest = "", words[1:]
    preposition = rest.pop(0) if rest[0].lower() in _EN_PREPOSITIONS and len(rest) > 1 else ""
    while rest and rest[0].lower() in _EN_ARTICLES:
        rest.pop(0)
    if not rest or rest[-1].lower().endswith("ing"):  # "Is X still working?": a verb form, no value to hide
        return None
    value = " ".join(rest)
    word = "When" if value.isdigit() and 3 <= len(value) <= 4 else "What"  # a year
    preposition = "" if word == "When" else preposition
    subject = question[aux.end():end].strip()
    asked = " ".join(w for w in (word, aux.group(1).lower(), subject, verb, preposition) if w)
    return Claim(value, asked + "?")


def _zh_object_claim(question: str) -> Claim | None:
    """A Chinese claim whose value is no name ("禾丰电器生产电饭煲吗" -> "电饭煲"): the words after its last verb,
    or the object of the preposition before a closing verb ("曾在鹤汀无线电厂工作吗"), by LAC's word tags; hidden as
    哪里 (a place, or after 在 / 于 / 从 / 到), 谁 (a person) or 什么."""
    words = claim_words(question)
    verbs = [i for i, (w, t) in enumerate(words) if t == "v" and not _ZH_ASKING.fullmatch(w)]
    if not verbs:
        return None
    last = verbs[-1]
    value = words[last + 1:]
    if not value and last > 0:  # the sentence closes on its verb: the value is its preposition's object
        preposition = next((i for i in range(last - 1, -1, -1) if words[i][1] == "p"), None)
        value = words[preposition + 1:last] if preposition is not None else []
        last = preposition if preposition is not None else last
    if not value or all(t == "w" for _, t in value) or any(t in ("m", "TIME") for _, t in value):
        return None  # nothing to hide, or a number or date: read as a claim (hiding numbers lost answers)
    at = sum(len(w) for w, _ in words[:last + 1])
    text = "".join(w for w, _ in value)
    place = any(t == "LOC" for _, t in value) or words[last][0] in _ZH_PLACE_BEFORE
    word = "哪里" if place else "谁" if any(t == "PER" for _, t in value) else "什么"
    asked = "".join(w for w, _ in words)
    return Claim(text, _ZH_ASKING.sub("", asked[:at] + word + asked[at + len(text):]) + "？")


def claim_subject(question: str, titles: Sequence[str], language: str) -> str:
    """Whom or what the claim is about: the first name the question gives ("" when it gives none)."""
    names = _names(question, titles, language)
    return question[names[0][0]:names[0][1]] if names else ""


def claim_words(question: str) -> list[tuple[str, str]]:
    """LAC's tagged words of a Chinese claim without its question particles (吗, 呢, the question mark)."""
    return [(w, t) for w, t in chinese_tagged(question) if w not in ("吗", "呢", "？", "?")]


def names_value(answer: str, value: str) -> bool:
    """The answer names the claimed value: one holds the other, or (for inflected words) they share a name word's
    root ("Ольховецкий политехнический институт" / "Ольховецком")."""
    a, v = _plain(answer), _plain(value)
    if not a or not v:
        return False
    if a in v or v in a:
        return True
    words = {root(t) for t in tokenize(value) if len(t) >= 5 and not HAN.search(t)}
    return bool(words & {root(t) for t in tokenize(answer) if len(t) >= 5})


_INSIDE = re.compile(r"^(?:,\s*|\s+in\s+|\s+в\s+|\s*（)")  # "Mill Lane in Stavenholt", "Ольховец, Горнокамская"


def within(answer: ReaderAnswer, passages: Sequence[Passage], value: str) -> bool:
    """The answer is a place inside the claimed one, as its passage writes it: "on Mill Lane in Stavenholt" holds
    "based in Stavenholt"."""
    if answer.kind != "span" or answer.in_title or answer.end <= 0:
        return False
    following = passages[answer.passage].text[answer.end:]
    joined = _INSIDE.match(following)
    if joined is None:
        return False
    place = following[joined.end():joined.end() + len(value) + 8]  # the next place name, to its comma or stop
    return names_value(place.split(",")[0].split("。")[0], value)


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _names(question: str, titles: Sequence[str], language: str) -> list[tuple[int, int]]:
    """The (start, end) of each name the question gives, in order, without overlaps: the pages it names first,
    then quoted titles, capitalised runs (not the question's first word, capitalised anyway, unless a Russian
    claim opens with its subject: "Зимогоров вырос в Горелове?") and Chinese names (NER, and place names)."""
    spans = [s for i in named_pages(question, titles) if (s := _span_of_title(question, titles[i]))]
    spans += [m.span() for m in _QUOTED.finditer(question)]
    spans += [s for s in map(lambda run: _past_first_word(question, run, language), _capitalized_runs(question))
              if s is not None]
    if HAN.search(question):  # LAC's names, by the word tags _zh_object_claim reads too
        spans += [(at, at + len(word)) for word, tag in chinese_tagged(question)
                  if lac_name(word, tag) and len(word) > 1 and (at := question.find(word)) >= 0]
    spans += [m.span() for m in _ZH_PLACE.finditer(question)]
    kept: list[tuple[int, int]] = []
    for span in spans:
        if not any(span[0] < e and s < span[1] for s, e in kept):
            kept.append(span)
    return sorted(kept)


def _span_of_title(question: str, title: str) -> tuple[int, int] | None:
    """Where the question writes a page title: its words by their terms (any inflection, any order), or for
    Chinese the characters of the title's character pairs."""
    terms = set(tokenize(title))
    if HAN.search(title):
        marked = [i for i in range(len(question)) if question[i:i + 2] in terms or question[max(0, i - 1):i + 1]
                  in terms]
        return (marked[0], marked[-1] + 1) if marked else None
    words = [m.span() for m in WORD.finditer(question) if set(tokenize(m.group(0))) & terms]
    return (words[0][0], words[-1][1]) if words else None


def _past_first_word(question: str, run: tuple[int, int], language: str) -> tuple[int, int] | None:
    """A capitalised run without the question's first word, capitalised anyway ("Did Orla Penhallow" -> "Orla
    Penhallow"), unless a Russian claim opens with its subject."""
    if run[0] > 0 or _opens_with_subject(question, language):
        return run
    first = WORD.match(question)
    second = WORD.search(question, first.end()) if first is not None else None
    return (second.start(), run[1]) if second is not None and second.start() < run[1] else None


def _opens_with_subject(question: str, language: str) -> bool:
    """A Russian claim whose first word is a name, not a lead ("Правда ли"), a verb ("Родился ли") or a word
    before "ли"."""
    first = WORD.match(question)
    return (language == "ru" and first is not None and not RU_LEAD.match(question)
            and not RU_WORD_LI.match(question) and not russian_predicate(first.group(0)))


def _capitalized_runs(question: str) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for match in WORD.finditer(question):
        word = match.group(0)
        if word[:1].isupper():
            if runs and question[runs[-1][1]:match.start()].strip() in ("", "of", "de", "von", "van", "&"):
                runs[-1] = (runs[-1][0], match.end())
            else:
                runs.append(match.span())
    return runs


def _hide(question: str, start: int, end: int, language: str) -> str:
    before, after = question[:start].rstrip(" «“\"《「"), question[end:].lstrip("»”\"》」").rstrip(" ?？.!")
    if HAN.search(question):
        tags = {t for _, t in chinese_tagged(question[start:end])}
        word = "哪里" if before.endswith(_ZH_PLACE_BEFORE) or after.startswith("人") or "LOC" in tags else (
            "谁" if before.endswith("是") or "PER" in tags else "什么")
        return _ZH_TAIL.sub("", _ZH_ASKING.sub("", before) + word + after) + "？"
    if language == "ru":
        # "Родился ли ...": the first word is the verb, not a name
        verb_first = not RU_LEAD.match(before) and bool(RU_WORD_LI.match(before))
        body = _RU_LI.sub("", RU_LEAD.sub("", before))
        where = bool(_RU_PLACE_PREP.search(body))
        body = _RU_PLACE_PREP.sub("", body).strip(" ,")
        if not body:
            return ""
        if verb_first:
            body = body[:1].lower() + body[1:]
        word = "Где" if where else "Кто" if russian_person(question[start:end]) else "Что"
        return f"{word} {body} {after}".strip() + "?"
    aux = EN_AUX.match(before)
    if not aux:
        return f"{before} what {after}".strip() + "?"
    body = _EN_ARTICLE.sub("", before[aux.end():].strip())
    where = bool(_EN_PLACE_PREP.search(body))
    body = _EN_PLACE_PREP.sub("", body)
    return f"{'Where' if where else 'What'} {aux.group(1).lower()} {body} {after}".strip() + "?"

