"""Language names for prompts and the abstention message in each language the agent answers in."""

from __future__ import annotations

LANGUAGE_NAMES = {"en": "English", "ru": "Russian", "zh": "Chinese", "zh-Hant": "Chinese in traditional characters"}

ABSTENTION = {
    "en": "I do not have enough information in the available sources to answer this question.",
    "ru": "В доступных источниках недостаточно информации, чтобы ответить на этот вопрос.",
    "zh": "现有资料中没有足够的信息来回答这个问题。",
    "zh-Hant": "現有資料中沒有足夠的信息來回答這個問題。",
}


def language_name(code: str) -> str:
    """'ru' -> 'Russian'; an unlisted code is named by itself (models know most ISO codes)."""
    return LANGUAGE_NAMES.get(code, code or "English")


def abstention(code: str) -> str:
    """The 'not enough information' answer in the question's language (English when not listed)."""
    return ABSTENTION.get(code, ABSTENTION["en"])
