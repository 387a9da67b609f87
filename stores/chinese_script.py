"""Traditional and simplified Chinese characters: one form for the rules and the reader, the user's form back.

Why: the question rules (question types, yes / no and "A or B" forms, enumeration, follow-ups, injected
instructions) are written in simplified characters, and the short-answer reader was trained on simplified text,
so a question in traditional characters (誰 / 谁, 幾個 / 几个, 什麼時候 / 什么时候) would miss the rules and read
worse. `simplified` folds text to simplified characters with OpenCC, keeping its length, so offsets found in the
folded text are offsets in the original and an answer is cut from what the user's document says.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from stores.scripts import HAN


@cache
def _converter(config: str) -> Any:
    import opencc

    return opencc.OpenCC(config)


def simplified(text: str) -> str:
    """`text` with its traditional characters in simplified form, same length; text without Han as it is.

    OpenCC converts by phrase, which keeps the length on ordinary text; where a phrase would change it, each
    character is converted on its own instead (a character whose form has another length stays as it is)."""
    if not HAN.search(text):
        return text
    converter = _converter("t2s")
    folded = converter.convert(text)
    if len(folded) == len(text):
        return folded
    return "".join(c if len(s := converter.convert(c)) != 1 else s for c in text)


def is_traditional(text: str) -> bool:
    """Whether the text has characters whose simplified form differs (so the user writes traditional)."""
    return simplified(text) != text


def script_language(language: str, text: str) -> str:
    """The language tag a reply to `text` is written in: "zh-Hant" for Chinese written in traditional characters,
    else `language` as it is."""
    return "zh-Hant" if language == "zh" and is_traditional(text) else language


def traditional(text: str) -> str:
    """`text` in traditional characters (a message written in simplified, for a user who writes traditional)."""
    return _converter("s2t").convert(text) if HAN.search(text) else text
