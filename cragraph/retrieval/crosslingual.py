"""Cross-lingual questions: a question written in a script that none of the index's languages use.

BM25 matches words, so a Russian or Chinese question over English documents (or back) shares almost no tokens
with them: only numbers and the odd name written in the other script, which a lone match makes look like a
strong lexical hit to dynamic fusion. The multilingual e5 embedder still matches meaning across languages, so
hybrid search runs such a question dense only (no BM25 weight did better on xquad_train; README "Cross-lingual
questions"). The rule compares writing systems, not detected languages: a short English question that language
identification misreads stays hybrid over an English index, and a mixed en + ru index keeps BM25 for Russian
questions, because one of its languages is written in Cyrillic. Same-script pairs (a French question over English
documents) stay hybrid: BM25 still matches their names.

The index's scripts are read once per opened bundle (the distinct `language` values of its chunks, one chunk's
text per language) and read again only after the bundle changed.
"""

from __future__ import annotations

import threading
import unicodedata
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Any

from stores.text import language_of

_SAMPLE_CHUNKS = 3  # chunks per language whose letters decide that language's script
_SCRIPT_NAMES = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK", "FULLWIDTH": "LATIN"}
_lock = threading.Lock()
_index_scripts: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, str], dict[str, str]]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class CrossLingual:
    """Why a question counts as cross-lingual for an index."""

    question_language: str
    question_script: str
    index_languages: tuple[str, ...]

    @property
    def note(self) -> str:
        """The retrieve node's trace line."""
        script = self.question_script if self.question_script == "CJK" else self.question_script.title()
        return (f"cross-lingual: {self.question_language} question ({script} script), index in "
                f"{', '.join(self.index_languages)}: dense only, BM25 cannot match its words")


def script_of(text: str) -> str | None:
    """The writing system of most of the text's letters (LATIN, CYRILLIC, CJK, HANGUL, ARABIC, GREEK, ...);
    None without letters. Han, kana and their fullwidth forms count as one script, CJK."""
    counts: Counter[str] = Counter()
    for char in text:
        if char.isalpha():
            name = unicodedata.name(char, "").split(" ", 1)[0]
            counts[_SCRIPT_NAMES.get(name, name)] += 1
    return counts.most_common(1)[0][0] if counts else None


def index_scripts(bundle: Any) -> dict[str, str]:
    """Language -> script of the index's chunks (languages without letters left out), cached per bundle."""
    # The docstore's checksum in the manifest changes with any write: no SQL query per search.
    key = (bundle.manifest.get("updated_at"), str(bundle.manifest.get("files", {}).get("docstore.sqlite")))
    with _lock:
        cached = _index_scripts.get(bundle)
        if cached is not None and cached[0] == key:
            return cached[1]
    scripts = {}
    for language in sorted(str(v) for v in bundle.docstore.metadata_values("language") if v):
        rows = bundle.docstore.filter_rows({"language": language})[:_SAMPLE_CHUNKS]
        script = script_of(" ".join(chunk.text for chunk in bundle.docstore.get(rows.tolist())))
        if script is not None:
            scripts[language] = script
    with _lock:
        _index_scripts[bundle] = (key, scripts)
    return scripts


def crosslingual(bundle: Any, question: str) -> CrossLingual | None:
    """A CrossLingual when the question's script is none of the index's scripts; None otherwise (same script,
    a question without letters, or an index whose chunks record no language)."""
    script = script_of(question)
    scripts = index_scripts(bundle)
    if script is None or not scripts or script in scripts.values():
        return None
    return CrossLingual(language_of(question), script, tuple(scripts))
