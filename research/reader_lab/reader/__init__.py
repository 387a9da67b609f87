"""Short-answer reader: question + retrieved passages -> the shortest span that answers (or yes / no / nothing).

Public entry point: `Reader.load(path).read(question, passages, language)` (see reader.reader).
"""

from reader.types import Passage, ReaderAnswer

__all__ = ["Passage", "ReaderAnswer", "Reader"]


def __getattr__(name: str):  # lazy: importing the package must not load torch
    if name == "Reader":
        from reader.reader import Reader

        return Reader
    raise AttributeError(name)
