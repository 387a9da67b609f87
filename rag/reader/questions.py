"""What kind of answer a question wants: yes / no, one of two named options, or a span.

Why: a span reader cannot say "yes" or "no", and on "Which is older, A or B?" it may point at a date rather
than at A or B. These forms are marked by closed-class words in every language, so rules are enough to spot
them; the reader's span scores then decide between the options. Chinese rules are in simplified characters:
the reader folds a traditional-character question before it asks (stores.chinese_script).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.reader import grammar
from stores.text import script_of
from stores.tokenize import tokenize

EN_AUX = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|am)\b", re.I)
_RU_YESNO = re.compile(r"(?:^|\s)ли(?:\s|$)|^(?:правда|верно)\b", re.I)
# a Russian question without a question word asks yes or no even without "ли" ("Лозня длиннее Мелети?")
_RU_WH = re.compile(r"(?:^|[^\w])(?:кто|кого|кому|кем|что|чего|чему|где|когда|куда|откуда|почему|зачем|как\w*|"
                    r"\w*скольк\w*|чей|чья|чь\w+|котор\w+)(?=[^\w]|$)|^чем\b|"
                    r"\b(?:в|во|с|со|о|об|на|при|за|над|под|перед)\s+чем\b|^\w+ите\b", re.I)
_ZH_YESNO = re.compile(r"吗[？?]?$|是否|是不是|有没有")
_ZH_WHICH_OF_TWO = re.compile(
    r"^(.{1,20}?)(?:和|与|跟|同)(.{1,20}?)[，,、]?(?:中|之中|两者中)?(?:哪(?!些)一?[\u4e00-\u9fff]|谁)"
)
_OR = re.compile(r"\s+(?:or|или)\s+|还是|或是", re.I)


@dataclass(frozen=True)
class QuestionForm:
    kind: str  # "yesno" | "options" | "span"
    options: tuple[str, ...] = ()


def _strip(text: str) -> str:
    """The text without the punctuation around it; a closing quote stays when the text opens it ("лидар «Иней»")."""
    stripped = text.strip(" \t\"'«»“”?？,，.。:：;；")
    cut = text[text.find(stripped) + len(stripped):] if stripped else ""  # what was stripped at the end
    for opening, closing in ("«»", "“”"):
        if stripped.count(opening) > stripped.count(closing) and closing in cut:
            stripped += closing
    return stripped


def question_form(question: str, language: str) -> QuestionForm:
    """Classify by surface rules; options are the two alternatives as written in the question."""
    q = question.strip()
    parts = _OR.split(q.rstrip("?？ "))
    if len(parts) == 2 and parts[0] and parts[1]:
        left, right = parts
        # the first option starts after the last comma / colon / dash, or after a leading auxiliary ("Was A or B ...")
        dash = left.rfind(" — ")
        cut = max(left.rfind(","), left.rfind("，"), left.rfind(":"), left.rfind("："), dash + 1 if dash >= 0 else -1)
        announced = cut >= 0 and left[cut] in ":：—"  # "Which came first: A or B?": what follows is the options
        if cut >= 0:
            first = left[cut + 1 :]
        elif (aux := EN_AUX.match(left)) and left[aux.end():aux.end() + 1].isspace():
            first = left[aux.end():].lstrip()  # "Was A or B the first ...": A follows the auxiliary
        else:  # "Which band was formed first The Exies or Circus Diablo": A is the trailing name
            words = left.split()
            n = _capitalized_run(words[::-1], trailing=True)
            first = " ".join(words[len(words) - n :]) if n else ""
        second = right
        if cut < 0:  # without a comma the second option ends where its name ends
            words = second.split()
            second = " ".join(words[: _capitalized_run(words)])
        first, second = _strip(first), _strip(second)
        if _option_like(first, language, announced) and _option_like(second, language, announced):
            return QuestionForm("options", (first, second))
    if len(parts) > 1:  # "... high or low?", "... restored or did they ...?": an alternative, not yes / no
        return QuestionForm("span")
    if language == "zh":  # "A和B哪个更早成立？": two options joined before "which"
        which = _ZH_WHICH_OF_TWO.search(q)
        if which and _option_like(_strip(which.group(1)), language) and _option_like(_strip(which.group(2)), language):
            return QuestionForm("options", (_strip(which.group(1)), _strip(which.group(2))))
    if language == "zh":
        asks = _ZH_YESNO.search(q) and not grammar.says(q, grammar.words("WH"))
        return QuestionForm("yesno") if asks else QuestionForm("span")
    if language == "ru":
        yesno = _RU_YESNO.search(q) or (q.endswith("?") and script_of(q) == "CYRILLIC" and not _RU_WH.search(q))
        return QuestionForm("yesno") if yesno else QuestionForm("span")
    if EN_AUX.match(q):  # with or without its question mark: users often leave it out
        return QuestionForm("yesno")
    return QuestionForm("span")


_JOINERS = {"of", "the", "and", "de", "von", "van", "&", "и"}


def _capitalized_run(words: list[str], trailing: bool = False) -> int:
    """How many leading words look like part of a name (capitalised, digits, or joiners inside a name)."""
    n = 0
    for w in words:
        if w[:1].isupper() or w[:1].isdigit() or (n and w.lower() in _JOINERS):
            n += 1
        else:
            break
    while n and words[n - 1].lower() in _JOINERS and not (trailing and words[n - 1].lower() == "the"):
        n -= 1
    return n


def _option_like(text: str, language: str, announced: bool = False) -> bool:
    """A short name-like alternative (capitalised or a number, in languages with capitals; a quoted name counts:
    "лидар «Иней»"); after a colon or a dash that announces the options, any short phrase ("the casting of the
    first bell"), an event being as good an option as a name."""
    if not text or len(text) > (120 if announced else 80) or len(text.split()) > (12 if announced else 8):
        return False
    if not any(ch.isalpha() for ch in text):
        return False
    return announced or language == "zh" or any(w.lstrip("«\"'“(")[:1].isupper() or w[:1].isdigit()
                                                 for w in text.split())


def is_both_question(question: str) -> bool:
    return grammar.says(question, grammar.words("PAIR"))


def content_terms(text: str) -> set[str]:
    """Index terms (stemmed, stopwords dropped) of a text."""
    return set(tokenize(text))
