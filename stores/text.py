"""Language identification and sentence splitting that keep offsets into the original text.

Chunking and knowledge-strip refinement both need sentences that are exact substrings of the source, so every
splitter here returns character spans; `split_sentences` just slices them out.

Splitters: razdel for Russian (and other Cyrillic languages pysbd lacks), pysbd for English and the other
languages pysbd supports, a regex on 。！？； and newlines for Chinese, a generic punctuation regex otherwise.
Every splitter runs on blocks of at most a few thousand characters (paragraphs, then windows cut at likely
sentence ends), which keeps pysbd, whose cost grows faster than linearly, quick on 100k-character inputs.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from stores.chinese_script import simplified
from stores.markdown_tables import TABLE_ROW

UNDETERMINED = "und"
"""Returned by `detect_language` for text with no letters (empty, digits, punctuation)."""

SHORT_TEXT_LETTERS = 12
"""Below this many letters the statistical model is unreliable; the writing system decides instead."""

MIN_CONFIDENCE = 0.5
"""py3langid normalized probability under which the writing system's default language is preferred."""

_LANGID_SAMPLE_CHARS = 4000
_BLOCK_CHARS = 2000
_PYSBD_LANGUAGES = frozenset([
    "en", "hi", "mr", "zh", "es", "am", "ar", "hy", "bg", "ur", "ru", "pl",
    "fa", "nl", "da", "fr", "my", "el", "it", "ja", "de", "kk", "sk",
])
_RAZDEL_LANGUAGES = frozenset(["ru", "uk", "be"])
_CHINESE_LANGUAGES = frozenset(["zh", "yue", "wuu", "cmn", "lzh", "gan", "hak", "nan"])

_ZH_BOUNDARY = re.compile(r"[。！？；!?;]+[”’」』〕）)\]\"']*|\n")
_GENERIC_BOUNDARY = re.compile(
    r"[.!?。！？；]+[\"'”’»)\]]*(?=\s+[\"'“‘«(\[]?[A-ZА-ЯЁ\d\u00C0-\u00DE])|[。！？；]+"
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_STRUCTURAL_LINE = re.compile(r"[ \t]*(?:#{1,6}[ \t]|[-*+•][ \t]|\d{1,3}[.)][ \t])")
_HEADING_LINE = re.compile(r"[ \t]*#{1,6}[ \t]")
_SENTENCE_END = re.compile(r"[.!?:;…。！？；][\"'”’»)\]]*$")
_WRAPPED_LINE_CHARS = 40
_WRAP_WIDTH = 100
_SOFT_BREAK = re.compile(r"\n|[.!?][\"'”’»)\]]*\s|[。！？；]+[”’」』〕）)\]\"']*")


# ----------------------------------------------------------------------------------------------- language


_SCRIPT_NAMES = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK", "FULLWIDTH": "LATIN"}


def script_of(text: str) -> str | None:
    """The writing system of most of the text's letters (LATIN, CYRILLIC, CJK, HANGUL, ARABIC, GREEK, ...);
    None without letters. Han, kana and their fullwidth forms count as one script, CJK."""
    counts: Counter[str] = Counter()
    for char in text:
        if char.isalpha():
            name = unicodedata.name(char, "").split(" ", 1)[0]
            counts[_SCRIPT_NAMES.get(name, name)] += 1
    return counts.most_common(1)[0][0] if counts else None


_identifier_lock = threading.Lock()


def language_identifier() -> Any:
    """py3langid's identifier, read once per process; a second caller (a cold ask's warm-up thread and its run)
    waits for the first instead of reading it again."""
    with _identifier_lock:
        return _read_identifier()


@cache
def _read_identifier() -> Any:
    """The identifier, its model read from an uncompressed copy in the user's cache, written on first use:
    decompressing the packaged LZMA file took most of the identifier's start. A py3langid whose model has another
    layout is read its own way."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    try:
        import numpy as np
        from py3langid.modelio import _to_array

        with np.load(_unpacked(MODEL_DIR / MODEL_FILE)) as data:
            return LanguageIdentifier(np.asarray(data["ptc"]), np.asarray(data["pc"]), data["classes"].tolist(),
                                      _to_array(data["nextmove"]), data["out_feat"].tolist(), norm_probs=True,
                                      tk_row=_to_array(data["nextmove_row"]))
    except (ImportError, KeyError, OSError, ValueError):
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _unpacked(packed: Path) -> Path:
    """The LZMA-packed model decompressed into the cache, named by the packed file's size and time."""
    import lzma
    import shutil

    from models.paths import build_atomically, models_cache_dir

    stat = packed.stat()
    path = models_cache_dir() / f"py3langid-{stat.st_size}-{stat.st_mtime_ns}.npz"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)

        def unpack(staging: Path) -> None:
            with lzma.open(packed) as source, staging.open("wb") as target:
                shutil.copyfileobj(source, target, length=1 << 20)

        build_atomically(path, unpack)
    return path


def _script_counts(text: str) -> dict[str, int]:
    counts = {"letters": 0, "han": 0, "kana": 0, "hangul": 0, "cyrillic": 0, "latin": 0}
    for char in text:
        if not char.isalpha():
            continue
        counts["letters"] += 1
        code = ord(char)
        if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
            counts["han"] += 1
        elif 0x3040 <= code <= 0x30FF:
            counts["kana"] += 1
        elif 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF:
            counts["hangul"] += 1
        elif 0x0400 <= code <= 0x04FF:
            counts["cyrillic"] += 1
        elif code < 0x0250:
            counts["latin"] += 1
    return counts


def _script_default(text: str, counts: dict[str, int]) -> str | None:
    """The most likely language of a writing system, used where the statistics are too thin to trust."""
    if counts["cyrillic"] * 2 >= counts["letters"]:
        lowered = text.lower()
        if any(char in lowered for char in "іїєґ"):
            return "uk"
        return "be" if "ў" in lowered else "ru"
    if counts["latin"] * 2 >= counts["letters"]:
        return "en"
    return None


def detect_language(text: str) -> str:
    """ISO 639-1 code of the text's language ('en', 'ru', 'zh', ...).

    Rules, in order: no letters at all -> 'und'; mostly Han characters -> 'zh' ('ja' when kana make up at
    least a tenth of the letters, 'ko' for mostly Hangul), because py3langid confuses short Chinese with
    Cantonese or Japanese; otherwise py3langid over the first 4000 characters, except that text with fewer
    than 12 letters, or a py3langid confidence under 0.5, takes its writing system's default: Cyrillic -> 'ru'
    ('uk' / 'be' when their own letters appear), Latin -> 'en'.
    """
    sample = text[:_LANGID_SAMPLE_CHARS]
    counts = _script_counts(sample)
    letters = counts["letters"]
    if letters == 0:
        return UNDETERMINED
    if counts["hangul"] * 2 >= letters:
        return "ko"
    if (counts["han"] + counts["kana"]) * 2 >= letters:
        return "ja" if counts["kana"] * 10 >= letters else "zh"
    default = _script_default(sample, counts)
    if letters < SHORT_TEXT_LETTERS and default:
        return default
    language, confidence = language_identifier().classify(simplified(sample))  # it knows Chinese mostly in simplified
    if confidence < MIN_CONFIDENCE and default:
        return default
    return normalize_language(language)


def language_of(text: str) -> str:
    """detect_language, with English for text whose language cannot be told (a question of digits, a name)."""
    language = detect_language(text)
    return language if language != UNDETERMINED else "en"


def normalize_language(language: str | None) -> str:
    """Lower-case base code: 'zh-CN' / 'zh_Hans' / 'yue' -> 'zh', 'ru-RU' -> 'ru', None/'' -> 'und'."""
    if not language:
        return UNDETERMINED
    base = re.split(r"[-_]", language.strip().lower(), maxsplit=1)[0]
    return "zh" if base in _CHINESE_LANGUAGES else base or UNDETERMINED


# ----------------------------------------------------------------------------------------------- sentences


def split_sentences(text: str, language: str) -> list[str]:
    """Sentences as exact substrings of `text`, without surrounding whitespace, in order."""
    return [text[start:end] for start, end in sentence_spans(text, language)]


def sentence_spans(text: str, language: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the sentences of `text`, in order, trimmed of whitespace.

    The spans never overlap and every non-whitespace character of `text` lies inside one of them. Blank lines
    and Markdown headings / list items always end a sentence; for Chinese every newline does.
    """
    language = normalize_language(language)
    spans: list[tuple[int, int]] = []
    for block_start, block_end in _blocks(text):
        block = text[block_start:block_end]
        for start, end in _segment(block, language):
            spans.append((block_start + start, block_start + end))
    return _cover_everything(text, spans)


def _segment(block: str, language: str) -> list[tuple[int, int]]:
    if language in _CHINESE_LANGUAGES:
        return _split_at(block, _ZH_BOUNDARY)
    if language in _RAZDEL_LANGUAGES:
        return _razdel_spans(block)
    if language in _PYSBD_LANGUAGES:
        spans = _pysbd_spans(block, language)
        if spans is not None:
            return spans
    return _split_at(block, _GENERIC_BOUNDARY)


def _razdel_spans(block: str) -> list[tuple[int, int]]:
    from razdel import sentenize

    return [(piece.start, piece.stop) for piece in sentenize(block)]


@cache
def _pysbd_segmenter(language: str) -> Any:
    import pysbd

    return pysbd.Segmenter(language=language, clean=False)


def _pysbd_spans(block: str, language: str) -> list[tuple[int, int]] | None:
    """pysbd returns strings, not offsets: walk the block matching their non-space characters.

    Returns None when pysbd altered the text (it may, on odd input), so the caller can fall back.
    """
    spans = []
    cursor = 0
    for sentence in _pysbd_segmenter(language).segment(_unwrap_lines(block)):
        wanted = [char for char in sentence if not char.isspace()]
        if not wanted:
            continue
        while cursor < len(block) and block[cursor].isspace():
            cursor += 1
        start = cursor
        for char in wanted:
            while cursor < len(block) and block[cursor].isspace():
                cursor += 1
            if cursor >= len(block) or block[cursor] != char:
                return None
            cursor += 1
        spans.append((start, cursor))
    return spans


def _unwrap_lines(block: str) -> str:
    """`block` with the line breaks of hard-wrapped prose turned into spaces (same length, same offsets).

    pysbd ends a sentence at every newline, so "founded in Eindhoven, the\nNetherlands. Its first..." became
    "...the" + "Netherlands." + "Its first...": a wrapped sentence cut in two, its tail glued to the next one by
    strip joining. Only a block that reads as hard-wrapped is changed: no line longer than a terminal's 100
    characters, and its lines (but the last) mostly 40 or longer. There a line that does not end a sentence (no
    final . ! ? : ; …) continues on the next line when it reaches half the longest line's length or the next line
    starts in lower case. A short unpunctuated line (a title, a name) keeps its break, and so do menus, lists and
    the long lines of scraped web text, whose headings are lines without a final stop."""
    if "\n" not in block:
        return block
    lines = block.split("\n")
    lengths = [len(line.strip()) for line in lines]
    inner = sorted(length for length in lengths[:-1] if length)
    longest = max(lengths)
    if longest > _WRAP_WIDTH or not inner or inner[len(inner) // 2] < _WRAPPED_LINE_CHARS:
        return block
    chars = list(block)
    position = 0
    for index, line in enumerate(lines[:-1]):
        position += len(line)
        text = line.strip()
        following = next((later.strip() for later in lines[index + 1:] if later.strip()), "")
        if text and following and not _SENTENCE_END.search(text) and (
            following[0].islower() or 2 * len(text) >= longest
        ):
            chars[position] = " "
        position += 1
    return "".join(chars)


def _split_at(block: str, boundary: re.Pattern[str]) -> list[tuple[int, int]]:
    """Cut after every match of `boundary`; the pieces are trimmed and empty ones dropped."""
    spans = []
    start = 0
    for match in boundary.finditer(block):
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(block)))
    return [trimmed for span in spans if (trimmed := trim_span(block, *span))]


def trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """(start, end) narrowed to exclude surrounding whitespace; None when only whitespace is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraphs and structural lines, each further cut into windows of at most ~2000 characters."""
    blocks = []
    start = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        blocks.extend(_structural_pieces(text, start, match.start()))
        start = match.end()
    blocks.extend(_structural_pieces(text, start, len(text)))
    windows = []
    for block_start, block_end in blocks:
        windows.extend(_windows(text, block_start, block_end))
    return windows


def _structural_pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split a paragraph before each Markdown list item / heading line / table row, and after each heading line and
    table row (a row is a unit: a long table is cut between rows, never inside one)."""
    pieces = []
    piece_start = start
    line_start = start
    while line_start < end:
        newline = text.find("\n", line_start, end)
        line_end = end if newline < 0 else newline
        line = text[line_start:line_end]
        row = bool(TABLE_ROW.match(line))
        if line_start > piece_start and (row or _STRUCTURAL_LINE.match(line)):
            pieces.append((piece_start, line_start))
            piece_start = line_start
        if row or _HEADING_LINE.match(line):
            pieces.append((piece_start, line_end))
            piece_start = line_end
        line_start = line_end + 1
    pieces.append((piece_start, end))
    return [trimmed for start_end in pieces if (trimmed := trim_span(text, *start_end))]


def _windows(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a long block at the last newline or sentence-like end before each ~2000-character limit."""
    windows = []
    while end - start > _BLOCK_CHARS:
        limit = start + _BLOCK_CHARS
        cut = None
        for match in _SOFT_BREAK.finditer(text, start + _BLOCK_CHARS // 4, limit):
            cut = match.end()
        if cut is None:
            space = max(text.rfind(" ", start + 1, limit), text.rfind("\n", start + 1, limit))
            cut = space if space > start else limit
        windows.append((start, cut))
        start = cut
    windows.append((start, end))
    return [trimmed for start_end in windows if (trimmed := trim_span(text, *start_end))]


def _cover_everything(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Guarantee the contract: sorted, disjoint, and no non-space character left outside every span."""
    result: list[tuple[int, int]] = []
    cursor = 0
    for start, end in sorted(spans):
        start = max(start, cursor)
        if start >= end:
            continue
        gap = trim_span(text, cursor, start)
        if gap:
            if result:
                result[-1] = (result[-1][0], gap[1])
            else:
                result.append(gap)
        trimmed = trim_span(text, start, end)
        if trimmed:
            result.append(trimmed)
        cursor = end
    tail = trim_span(text, cursor, len(text))
    if tail:
        if result:
            result[-1] = (result[-1][0], tail[1])
        else:
            result.append(tail)
    return result

