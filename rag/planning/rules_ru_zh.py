"""Bridge shapes of Russian and Chinese questions for the rule decomposer (the English ones: rules.py).

- Russian role bridge: a role noun in the nominative (the subject) and the genitive phrase after it, to the end
  of the question, are asked first: "Где родился основатель компании «Кипрей»?" -> "Кто основатель компании
  «Кипрей»?", then "Где родился {x1}?".
- Russian relative bridge: a noun and the clause after its comma, opened by a form of "который" or a
  participle, to the end of the question: "Какой институт окончил инженер, по проекту которого построен мост?"
  -> "инженер, по проекту которого построен мост", then "Какой институт окончил {x1}?".
- Chinese role bridge: "<phrase>的<role>" opening the question: "禾丰电器的创始人出生在哪里？" -> "禾丰电器的创始人
  是谁？", then "{x1}出生在哪里？"; "设计X的建筑师" is a phrase like any other. A person's place ("X的家乡") is
  asked "在哪里".
- Chinese relative bridge: "<clause with a verb>的<noun>" opening the question, by LAC's word tags:
  "建造云雀号的船厂位于哪座城市？" -> "哪个船厂建造云雀号？", then "{x1}位于哪座城市？".
- Chinese compound role, when neither shape matched: a role compounded without 的, one of LAC's words after a
  noun, a name or 现任 / 前任: "禾丰电器现任总经理毕业于哪所大学？" -> "禾丰电器现任总经理是谁？", then "{x1}毕业于
  哪所大学？".
A role is a person's position or relation (founder, author, architect, wife ...): grammar, not benchmark names.
"""

from __future__ import annotations

import re

from rag.planning.plan import Decomposition, SubQuestion
from stores.ner import chinese_tagged, russian_attribute, russian_predicate
from stores.scripts import HAN


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Russian roles in the nominative; agent nouns in -тель / -тельница and -ист / -истка count without a list.
_RU_ROLES = _words("""
автор авторка архитектор директор инженер тренер режиссёр режиссер редактор капитан глава мэр владелец владелица
хозяин хозяйка муж жена супруг супруга отец мать сын дочь брат сестра преемник преемница предшественник
предшественница наследник наследница художник конструктор проектировщик ректор президент начальник командир
дирижёр дирижер композитор скульптор лидер продюсер изобретатель руководительница основательница
""")
_RU_AGENT = re.compile(r"(?:тель|тельница|ист|истка)$")
_RU_WORD = re.compile(r"[А-Яа-яЁё][А-Яа-яЁё\-]*")
_RU_QUESTION_WORDS = _words("""
где когда кто что чем чей чья чьё чьи какой какая какое какие каком какого какую каких какому сколько
почему зачем куда откуда ли в во на с со к о об у из по за до от году годах это был была было были является
""")
_RU_RELATIVE = re.compile(
    r"(?P<np>[А-Яа-яЁё\-]+),\s+(?P<clause>(?:(?:по|в|во|на|с|со|у|из|для|за|при|к|о)\s+)?"
    r"(?:[а-яё]+\s+)?(?:котор[а-яё]+|где|куда|откуда)\s+[^?]{3,}?|[а-яё]+(?:вший|вшая|вшее|вшие|вшего|вшей|вшую|"
    r"вшим|вших|щий|щая|щее|щие|щего|щей|щую))(?:\s+[^?]*?)?\s*\??$")
_ZH_ROLES = ("创始人", "创办人", "创立者", "作者", "设计者", "设计师", "建筑师", "工程师", "总经理", "经理", "董事长",
             "校长", "院长", "馆长", "主编", "导演", "教练", "主教练", "队长", "船长", "老板", "负责人", "发明者",
             "发明人", "妻子", "丈夫", "父亲", "母亲", "儿子", "女儿", "继任者", "前任", "接班人", "主席", "市长",
             "厂长", "社长", "主唱", "创作者", "建造者", "主人", "店主", "首席执行官", "主任", "老师", "总监")
_ZH_PLACES = ("家乡", "故乡", "出生地")  # asked "在哪里", as English asks "the birthplace of X"
_ZH_ROLE = re.compile(
    r"^(?P<np>.{2,40}?的(?P<role>" + "|".join(sorted(_ZH_ROLES + _ZH_PLACES, key=len, reverse=True))
    + r"))(?P<rest>.+)$")
_ZH_TENURE = ("现任", "前任")
_ZH_HOLDER_TAGS = frozenset(["n", "nz", "nw", "ORG", "PER", "LOC", "w"])  # LAC tags of a word a role can follow
_ZH_ASKS = re.compile(r"哪|什么|谁|几|多少|何|吗|多长|多高|多大|多深")
_ZH_ASKING_ONLY = re.compile(r"是|谁|什么|哪|吗|呢|的|人|位|个|叫|名|字|称")
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")


def other_language_decomposition(text: str) -> Decomposition | None:
    """A two-hop DAG for a Russian or Chinese bridge shape, or None."""
    if _CYRILLIC.search(text):
        return _ru_relative(text) or _ru_role(text)
    if HAN.search(text):
        return _zh_role(text) or _zh_relative(text) or _zh_compound_role(text)
    return None


def _two_hops(first: str, outer: str) -> Decomposition:
    return Decomposition(sub_questions=[
        SubQuestion(id="q1", text=first, slot="x1"),
        SubQuestion(id="q2", text=outer, deps=["q1"]),
    ])


def _ru_is_role(word: str) -> bool:
    word = word.lower()
    return word in _RU_ROLES or (len(word) > 5 and bool(_RU_AGENT.search(word)))


def _ru_asks(outer: str) -> bool:
    """What is left of the question still asks something of the slot ("Где родился {x1}?")."""
    return any(w.lower() not in _RU_QUESTION_WORDS for w in _RU_WORD.findall(outer.replace("{x1}", " ")))


def _ru_role(text: str) -> Decomposition | None:
    body = text.rstrip(" ?")
    for match in _RU_WORD.finditer(body):
        if not _ru_is_role(match.group()):
            continue
        # a verb ends the role's genitive phrase ("основатель компании «Кипрей» родился ...")
        verb = next((w for w in _RU_WORD.finditer(body, match.end()) if russian_predicate(w.group())), None)
        end = verb.start() if verb else len(body)
        start = _with_adjectives(body, match.start())
        phrase = body[start:end].rstrip(" ,")
        if len(_RU_WORD.findall(phrase)) < 2 or len(phrase.split()) > 10:
            continue
        after = body[end:].strip()
        outer = f"{body[: start].rstrip(' ,')} {{x1}}{' ' + after if after else ''}?".lstrip()
        if _ru_asks(outer):
            return _two_hops(f"Кто {phrase[:1].lower()}{phrase[1:]}?", outer)
    return None


def _ru_relative(text: str) -> Decomposition | None:
    match = _RU_RELATIVE.search(text)
    if not match or match.start() == 0:
        return None
    start = _with_adjectives(text, match.start("np"))
    phrase = text[start:].rstrip(" ?")
    outer = f"{text[: start].rstrip(' ,')} {{x1}}?"
    return _two_hops(phrase, outer) if _ru_asks(outer) else None


def _with_adjectives(text: str, start: int) -> int:
    """Where the noun phrase ending in the noun at `start` begins: the adjectives right before a noun that agree
    with it are its own ("дочернее общество, которое ...", "нынешний председатель совета"), not words left behind
    in the question."""
    noun = _RU_WORD.match(text, start)
    while noun and (word := re.search(r"([А-Яа-яЁё\-]+)\s+$", text[:start])) \
            and word.group(1).lower() not in _RU_QUESTION_WORDS and russian_attribute(word.group(1), noun.group()):
        start = word.start(1)
    return start


def _zh_role(text: str) -> Decomposition | None:
    body = text.strip().rstrip("？?")
    match = _ZH_ROLE.match(body)
    return _zh_role_hops(match.group("np"), match.group("role"), match.group("rest")) if match else None


def _zh_role_hops(phrase: str, role: str, rest: str) -> Decomposition | None:
    # the rest asks a question, and more than who or what the role's holder is ("……的创始人是谁", "……的家乡是哪里"
    # are one hop)
    left = _ZH_ASKING_ONLY.sub("", rest)
    if not _ZH_ASKS.search(rest) or not left or (role in _ZH_PLACES and left == "里"):
        return None
    asked = "在哪里" if role in _ZH_PLACES else "是谁"
    return _two_hops(f"{phrase}{asked}？", f"{{x1}}{rest}？")


def _zh_compound_role(text: str) -> Decomposition | None:
    """A role compounded without 的 ("禾丰电器现任总经理毕业于……", "心内科主任是……"), when no other shape
    matched: the role is one of LAC's words after a noun, a name or 现任 / 前任 (so "砚港市长大" holds no 市长 and
    "卸任院长" no holder)."""
    words = chinese_tagged(text.strip().rstrip("？?"))
    for i, (word, _) in enumerate(words[1:], start=1):
        before, tag = words[i - 1]
        if word in _ZH_ROLES and word not in _ZH_TENURE and (before in _ZH_TENURE or tag in _ZH_HOLDER_TAGS):
            rest = "".join(w for w, _ in words[i + 1:])
            return _zh_role_hops("".join(w for w, _ in words[:i + 1]), word, rest)
    return None


_ZH_THAT = {"那", "那个", "那座", "那家", "那条", "那所", "那位", "那部", "那艘", "那支"}


def _zh_relative(text: str) -> Decomposition | None:
    """"<clause with a verb>的<noun>" opening the question (LAC's word tags): "建造云雀号的船厂位于哪座城市？" ->
    "建造云雀号的船厂", then "{x1}位于哪座城市？"; "沈慕远出生的那个镇" drops its 那个."""
    words = chinese_tagged(text.strip().rstrip("？?"))
    of = next((i for i, (w, t) in enumerate(words) if w == "的" and t == "u"), None)
    if of is None or not any(t == "v" for _, t in words[:of]):
        return None
    noun = of + 1
    while noun < len(words) and (words[noun][0] in _ZH_THAT or words[noun][1] == "q"):
        noun += 1
    if noun >= len(words) or words[noun][1] not in ("n", "s", "LOC", "ORG"):
        return None
    rest = "".join(w for w, _ in words[noun + 1:]).lstrip("，,、 ")
    if not _ZH_ASKS.search(rest) or not _ZH_ASKING_ONLY.sub("", rest):
        return None
    clause = "".join(w for w, _ in words[:of])
    return _two_hops(_zh_asked(clause, words[noun][0], verb_first=words[0][1] in ("v", "p")), f"{{x1}}{rest}？")


def _zh_asked(clause: str, noun: str, verb_first: bool) -> str:
    """The hop asked as a question when its clause is the noun's own predicate ("负责X的小组" -> "哪个小组负责X？",
    as the English hops are asked); a clause with a subject of its own ("沈慕远出生的镇") stays a phrase."""
    return f"哪个{noun}{clause}？" if verb_first else f"{clause}的{noun}"
