"""Cross-lingual questions: a question written in a script that none of the index's languages use.

BM25 matches words, so a Russian or Chinese question over English documents (or back) shares almost no tokens
with them: only numbers and the odd name written in the other script, which a lone match makes look like a
strong lexical hit to dynamic fusion. The multilingual e5 embedder still matches meaning across languages, so
hybrid search runs such a question dense only (no BM25 weight did better on xquad_train; README "Cross-lingual
questions"). The rule compares writing systems, not detected languages: a short English question that language
identification misreads stays hybrid over an English index, and a mixed en + ru index keeps BM25 for Russian
questions, because one of its languages is written in Cyrillic. Same-script pairs (a French question over English
documents) stay hybrid: BM25 still matches their names.

A multilingual embedder also places a question by its language: Chinese questions share a direction that
English passages lack. The question vector is moved from its language's mean question vector to the index
language's (rag/retrieval/query_means: means over XQuAD's parallel training questions, which say the same
thing in each language, so two means differ by language, not topic). An embedder or language without a
computed mean is searched unmoved, and the trace says so.

A short question matches a whole passage in another language worse than it matches the one sentence that
answers it, so the dense head (SENTENCE_RESCORED passages) is then re-scored by its best sentence as well (half
chunk cosine, half best-sentence cosine: the weight chosen on xquad_train). Sentence vectors are embedded at
query time and kept in the embedding cache, so each sentence is embedded once.

BM25 gets a say again through a Chinese-English dictionary (rag.retrieval.glosses, CC-CEDICT). A Chinese
question over Latin-script documents is also searched by BM25 with its English glosses; a Latin-script question
over Chinese documents is matched by BM25 against the English glosses of the dense head's passages (glossed at
query time: the index holds no glosses). Either list is added to the dense scores with GLOSS_WEIGHT (chosen on
xquad_train). Names the dictionary lacks are lost, so the glosses only re-order what the dense search ranks.

The index's scripts are read once per opened bundle (the distinct `language` values of its chunks, one chunk's
text per language) and read again only after the bundle changed.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import warnings
import weakref
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from models.embedder import canonical_name
from rag.retrieval.glosses import DictionaryError, dictionary, english_glosses
from stores.bm25 import BM25Index
from stores.embed_cache import embed_passages_cached
from stores.text import language_of, script_of, split_sentences

_SAMPLE_CHUNKS = 3  # chunks per language whose letters decide that language's script
SENTENCE_RESCORED = 20
"""Passages of a cross-lingual question's dense list whose sentences are embedded and compared with it."""
SENTENCE_WEIGHT = 0.5
GLOSS_WEIGHT = 0.3
"""Share of the dictionary glosses' BM25 list in a ranking between Chinese and English (min-max scale)."""
QUERY_MEANS = Path(__file__).resolve().parent / "query_means"
"""<embedder>.npz per embedder: language code -> mean question vector (`python -m cragraph_lab bench query-means`)."""
_lock = threading.Lock()
_index_scripts: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, str], dict[str, str]]] = weakref.WeakKeyDictionary()
_rows_of_languages: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], dict[str, np.ndarray]]] = (
    weakref.WeakKeyDictionary())


@dataclass(frozen=True)
class CrossLingual:
    """Why a question counts as cross-lingual for an index."""

    question_language: str
    question_script: str
    index_languages: tuple[str, ...]
    offset: np.ndarray | None = field(default=None, compare=False, repr=False)
    """Index languages' mean question vector minus the question language's; None: no means for them."""
    glosses: str = ""
    """The question's English glosses for BM25 (a Chinese question over Latin-script documents); "" otherwise."""
    passage_glosses: bool = False
    """Match the question against its dense head's passages glossed in English (a Latin-script question over
    Chinese documents)."""

    def moved(self, vectors: np.ndarray) -> np.ndarray:
        """Question vectors moved by the language offset and normalized again (unchanged without one)."""
        if self.offset is None:
            return vectors
        shifted = np.asarray(vectors, dtype=np.float32) + self.offset
        return shifted / np.linalg.norm(shifted, axis=-1, keepdims=True)

    @property
    def note(self) -> str:
        """The retrieve node's trace line."""
        script = self.question_script if self.question_script == "CJK" else self.question_script.title()
        moved = ("question vector moved from its language's mean to the index's" if self.offset is not None
                 else "no language means for this embedder or language: question vector not moved")
        if self.glosses:
            lexical = f"BM25 over its English dictionary glosses ({self.glosses!r}) added"
        elif self.passage_glosses:
            lexical = f"BM25 of it over the English dictionary glosses of the best {SENTENCE_RESCORED} passages added"
        else:
            lexical = "dense only, BM25 cannot match its words"
        return (f"cross-lingual: {self.question_language} question ({script} script), index in "
                f"{', '.join(self.index_languages)}: {lexical}; {moved}; the best "
                f"{SENTENCE_RESCORED} passages re-scored by their best sentence")


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


def visible_scripts(bundle: Any, visible: np.ndarray | None) -> dict[str, str]:
    """index_scripts for a caller who sees the `visible` rows (None: all): only languages some visible chunk
    has, so neither routing nor the trace's note tells a caller which languages hidden documents are in."""
    scripts = index_scripts(bundle)
    if visible is None:
        return scripts
    rows = _language_rows(bundle, tuple(scripts))
    return {language: script for language, script in scripts.items() if np.intersect1d(rows[language], visible).size}


def _language_rows(bundle: Any, languages: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Each language's rows, read once per bundle version (as index_scripts is), not on every search."""
    key = (bundle.manifest.get("updated_at"), str(bundle.manifest.get("files", {}).get("docstore.sqlite")))
    with _lock:
        cached = _rows_of_languages.get(bundle)
        if cached is not None and cached[0] == (key, languages):
            return cached[1]
    rows = {language: bundle.docstore.filter_rows({"language": language}) for language in languages}
    with _lock:
        _rows_of_languages[bundle] = ((key, languages), rows)
    return rows


def crosslingual(bundle: Any, question: str, visible: np.ndarray | None = None) -> CrossLingual | None:
    """A CrossLingual when the question's script is none of the scripts of the index's (`visible`) chunks; None
    otherwise (same script, a question without letters, or an index whose chunks record no language)."""
    script = script_of(question)
    if script is None:
        return None
    scripts = visible_scripts(bundle, visible)
    if script is None or not scripts or script in scripts.values():
        return None
    language = language_of(question)
    glossed = language == "zh" and "LATIN" in scripts.values() and _dictionary_readable()
    glosses = english_glosses(question) if glossed else ""
    passage_glosses = script == "LATIN" and "zh" in scripts and _dictionary_readable()
    return CrossLingual(language, script, tuple(scripts), language_offset(bundle.settings.embedder, language,
                                                                          tuple(scripts)), glosses, passage_glosses)


@functools.cache
def _dictionary_readable() -> bool:
    """Whether the glosses' dictionary can be read; if not, one warning, and questions are searched dense only
    (answered once per process: a damaged dictionary is not read again on every search)."""
    try:
        dictionary()
    except DictionaryError as error:
        warnings.warn(f"{error}; questions across Chinese and English are searched dense only", stacklevel=3)
        return False
    return True


def means_file(folder: Path, embedder: str) -> Path:
    """Where `embedder`'s means live in `folder`: named by its canonical name, so every alias finds them."""
    return folder / f"{canonical_name(embedder).replace('/', '__')}.npz"


@functools.lru_cache(maxsize=8)
def query_means(embedder: str) -> dict[str, np.ndarray]:
    """Language -> mean question vector computed for `embedder` (any of its aliases); {} when none was, or when
    its file is damaged (said once as a warning: searches go on unmoved)."""
    path = means_file(QUERY_MEANS, embedder)
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as loaded:
            return {language: loaded[language].astype(np.float32) for language in loaded.files}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        warnings.warn(f"cross-lingual language means {path} are damaged ({error}); cross-lingual questions are "
                      "searched unmoved. Rewrite them with `python -m cragraph_lab bench query-means`", stacklevel=2)
        return {}


def language_offset(embedder: str, question_language: str, index_languages: tuple[str, ...]) -> np.ndarray | None:
    """The mean of the index languages' mean question vectors minus the question language's; None when the
    question's language or every index language lacks one."""
    means = query_means(embedder)
    targets = [means[language] for language in index_languages if language in means]
    if question_language not in means or not targets:
        return None
    return np.mean(targets, axis=0) - means[question_language]


def best_sentence_rescored(bundle: Any, vector: np.ndarray, scores: dict[int, float],
                           top: int = SENTENCE_RESCORED) -> dict[int, float]:
    """`scores` (row -> chunk cosine) with its `top` rows re-scored as a mix of the chunk's cosine and its best
    sentence's cosine to the question vector; the other rows keep theirs."""
    head = sorted(scores, key=lambda row: -scores[row])[:top]
    if not head:
        return scores
    sentences = [split_sentences(chunk.text, language_of(chunk.text)) or [chunk.text]
                 for chunk in bundle.docstore.get(head)]
    flat = [sentence for found in sentences for sentence in found]
    cosines = _sentence_vectors(bundle.embedder, flat) @ np.asarray(vector, dtype=np.float32)
    rescored = dict(scores)
    start = 0
    for row, found in zip(head, sentences, strict=True):
        best = float(cosines[start:start + len(found)].max())
        start += len(found)
        rescored[row] = (1 - SENTENCE_WEIGHT) * scores[row] + SENTENCE_WEIGHT * best
    return rescored


def passage_gloss_matches(bundle: Any, question: str, scores: dict[int, float],
                          top: int = SENTENCE_RESCORED) -> dict[int, float]:
    """BM25 of `question` over the English glosses of the `top` best rows of `scores` (row -> score; rows it
    does not match left out). The head is its own small BM25 corpus: its idf says which words are rare there."""
    head = sorted(scores, key=lambda row: -scores[row])[:top]
    if not head:
        return {}
    index = BM25Index()
    index.add(head, [english_glosses(chunk.text) for chunk in bundle.docstore.get(head)])
    ids, matched = index.search(question, len(head))
    return dict(zip(ids.tolist(), matched.tolist(), strict=True))


def with_gloss_matches(scores: dict[int, float], glossed: dict[int, float],
                       weight: float = GLOSS_WEIGHT) -> dict[int, float]:
    """`scores` plus the gloss BM25 list, as (1 - weight) * min-max(scores) + weight * bm25 / its best, kept on
    the scale of `scores` (their range): a row only BM25 found starts from the lowest score."""
    best = max(glossed.values(), default=0.0)
    if not scores or best <= 0:
        return scores
    low, high = min(scores.values()), max(scores.values())
    scale = (high - low if high > low else 1.0) * weight / (1 - weight)
    mixed = dict(scores)
    for row, value in glossed.items():
        mixed[row] = mixed.get(row, low) + scale * max(value, 0.0) / best
    return mixed


def _sentence_vectors(embedder: Any, sentences: list[str]) -> np.ndarray:
    """Through the embedding cache (each sentence embedded once), or straight from the embedder when the cache
    cannot be opened or written (a read-only home folder): a search never fails for the cache."""
    try:
        return embed_passages_cached(embedder, sentences, progress=False)
    except (OSError, sqlite3.Error):
        return np.asarray(embedder.embed_passages(sentences), dtype=np.float32)
