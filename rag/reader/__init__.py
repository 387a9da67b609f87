"""The short-answer reader: a question and a few passages -> the shortest span that answers (or yes / no).

`load_reader()` gives the process-wide reader over the packaged weights; `Reader.read(question, passages,
language)` returns a `ReaderAnswer` or None. Importing this package does not load torch.
"""

from rag.reader.types import Passage, ReaderAnswer, ReaderWeightsError

__all__ = ["Passage", "ReaderAnswer", "ReaderWeightsError"]
