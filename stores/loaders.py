"""Read a user's files and folders into Documents, skipping (and reporting) whatever cannot be read.

One bad file never stops a load: it lands in `LoadResult.skipped` with a reason and a warning on the
"cragraph.ingest" logger. Only a path the user named explicitly that does not exist raises, since that is
almost always a typo the user wants to hear about at once.

Document ids: a JSONL record keeps its own `id`; any other file gets its path relative to the folder that was
given (posix separators, e.g. "rivers/volga.md"), or its file name when the file itself was given. Folders are
walked recursively in sorted order; hidden files and folders (names starting with ".") are ignored. A symbolic
link is followed only while its target stays inside the folder given (a link to /etc/hostname is skipped and
reported), unless `follow_symlinks=True` asks for every link; either way each real folder is walked once, so a
link loop ends. A folder that cannot be listed is reported as skipped, never dropped silently.

Whatever bytes a file or its name holds, the text that leaves this module is valid Unicode: lone surrogates
(from a non-UTF-8 file name or a "\\ud800" escape in JSONL) become U+FFFD or a backslash escape, since SQLite,
the tokenizers and JSON output all refuse them.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from stores.types import Document

logger = logging.getLogger("cragraph.ingest")

SUPPORTED_SUFFIXES = (".jsonl", ".txt", ".md", ".markdown", ".html", ".htm")

_DROPPED_HTML_TAGS = ("script", "style", "nav", "noscript", "template", "svg", "iframe")
_HTML_BLOCK_TAGS = (
    "p", "div", "section", "article", "main", "header", "footer", "aside", "h1", "h2", "h3", "h4", "h5", "h6",
    "li", "ul", "ol", "dl", "dt", "dd", "table", "tr", "td", "th", "pre", "blockquote", "figure",
    "figcaption", "title", "address", "hr", "form",
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_METADATA_DEPTH = 64
"""Deeper metadata is refused per line: SQLite's JSON functions stop at 1,000 levels and nothing real nests so."""
_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
)
_SINGLE_BYTE_ENCODINGS = ("cp1251", "cp1252", "koi8_r", "latin-1")
"""Tried when a file is not UTF-8, in this order on a tie: Russian Windows, Western Windows, Russian Unix, Latin-1."""
_MD_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_MD_SETEXT_HEADING = re.compile(r"^(\S[^\n]*)\n[ \t]{0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)


@dataclass
class LoadResult:
    """Documents read, in a deterministic order, and (path, reason) for everything skipped."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


class SkipFile(Exception):
    """A file (or a JSONL line) that cannot become a document; the message is the reason shown to the user."""


def load_documents(paths: Sequence[str | Path], follow_symlinks: bool = False) -> LoadResult:
    """Load every supported file under `paths` (files or folders).

    Raises FileNotFoundError for a given path that does not exist; everything else that goes wrong is a skip.
    `follow_symlinks` also follows links whose target lies outside the folder given (off: they are skipped).
    """
    for given in paths:
        if not Path(given).exists():
            raise FileNotFoundError(f"no such file or folder: {printable_path(given)!r}")
    result = LoadResult()
    first_source: dict[str, str] = {}
    for file_path, doc_id in _candidate_files(paths, follow_symlinks, result):
        source = printable_path(file_path)
        try:
            loaded = _load_file(file_path, doc_id)
        except SkipFile as reason:
            _skip(result, source, str(reason))
            continue
        except Exception as error:  # a parser bug or I/O error on one file must not stop the load
            _skip(result, source, f"unreadable: {type(error).__name__}: {error}")
            continue
        for line, item in loaded:
            where = f"line {line}: " if line is not None else ""
            if isinstance(item, str):
                _skip(result, source, where + item)
            elif item.id in first_source:
                _skip(result, source,
                      f"{where}duplicate document id {item.id!r} (kept the one from {first_source[item.id]})")
            else:
                first_source[item.id] = source
                result.documents.append(item)
    return result


def _skip(result: LoadResult, source: str, reason: str) -> None:
    logger.warning("skipped %s: %s", source, reason)
    result.skipped.append((source, reason))


def printable_path(path: str | Path) -> str:
    """A path as valid Unicode: bytes that are not UTF-8 in a file name become backslash escapes ("\\xff"),
    which keeps two such names apart and can be stored, printed and compared."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def _candidate_files(paths: Sequence[str | Path], follow_symlinks: bool,
                     result: LoadResult) -> Iterator[tuple[Path, str]]:
    """(file, default document id) for every file under the given paths, folders walked in sorted order."""
    for given in paths:
        root = Path(given)
        if root.is_file():
            yield root, printable_path(root.name)
            continue
        found: list[tuple[str, Path]] = []
        _walk(root, root.resolve(), "", follow_symlinks, {root.resolve()}, found, result)
        for relative_name, path in sorted(found):
            yield path, relative_name


def _walk(folder: Path, real_root: Path, prefix: str, follow_symlinks: bool, seen: set[Path],
          found: list[tuple[str, Path]], result: LoadResult) -> None:
    """Collect (relative name, path) of the files under `folder`, without a link out of `real_root` (unless
    `follow_symlinks`) and without entering a real folder twice (a link loop ends here)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as error:
        _skip(result, printable_path(folder), f"unreadable folder ({error.strerror or error}); its files were not "
                                               f"indexed")
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        relative = prefix + printable_path(entry.name)
        try:
            is_link = entry.is_symlink()
            target = path.resolve() if is_link else path
            if is_link and not follow_symlinks and not target.is_relative_to(real_root):
                _skip(result, printable_path(path), f"symbolic link to {printable_path(target)}, outside the folder "
                                                    f"being indexed (use --follow-symlinks to index it)")
                continue
            if path.is_dir():
                real = path.resolve()
                if real in seen:
                    continue  # a link loop or a second link to a folder already walked
                seen.add(real)
                _walk(path, real_root, relative + "/", follow_symlinks, seen, found, result)
            elif path.is_file():
                found.append((relative, path))
            elif is_link:
                _skip(result, printable_path(path), "broken symbolic link")
        except (OSError, RuntimeError) as error:  # RuntimeError: resolve() on a symlink loop in older Pythons
            _skip(result, printable_path(path), f"unreadable ({error})")


def _load_file(path: Path, doc_id: str) -> list[tuple[int | None, Document | str]]:
    """(JSONL line number or None, Document or the reason that line was skipped) for one file."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise SkipFile("unsupported type")
    text = read_text(path)
    source = printable_path(path)
    if suffix == ".jsonl":
        return _jsonl_documents(text, source)
    if suffix in (".html", ".htm"):
        title, body = html_to_text(text)
        title = title or _title_from_stem(path)
    elif suffix in (".md", ".markdown"):
        body = text
        title = markdown_title(text) or _title_from_stem(path)
    else:
        body = text
        title = _title_from_stem(path)
    body = body.strip()
    if not body:
        raise SkipFile("no text")
    return [(None, Document(id=doc_id, text=body, title=title, metadata={"source": source}))]


def _title_from_stem(path: Path) -> str:
    """"radium_institute.txt" -> "radium institute": a title BM25 and the embedder can read."""
    stem = printable_path(path.stem)  # a non-UTF-8 name must not put a lone surrogate into the title
    return " ".join(re.split(r"[_\-\s]+", stem)).strip() or stem


def read_text(path: Path) -> str:
    """File contents as text: UTF-8/16/32 as their byte-order mark says, else UTF-8, else the single-byte
    encoding (cp1251, cp1252, KOI8-R, Latin-1) whose decoding reads most like real words.

    Raises SkipFile for empty and binary files.
    """
    data = path.read_bytes()
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                raise SkipFile(f"binary file (starts with a {encoding} byte-order mark but is not {encoding})"
                               ) from None
            if not text.strip():
                raise SkipFile("empty file")
            if "\x00" in text:
                raise SkipFile("binary file (contains NUL characters)")
            return _LONE_SURROGATE.sub("\ufffd", text)
    if not data.strip():
        raise SkipFile("empty file")
    if b"\x00" in data:
        raise SkipFile("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    decoded = []
    for encoding in _SINGLE_BYTE_ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _looks_like_text(text):
            decoded.append((_implausible_words(text), text))
    if decoded:
        return min(decoded, key=lambda item: item[0])[1]  # min keeps the first of equals: the order above
    raise SkipFile("binary file (not decodable as UTF-8, UTF-16, UTF-32 or single-byte text)")


_WORDS = re.compile(r"[^\W\d_]+")


def _implausible_words(text: str) -> int:
    """Words a wrong single-byte decoding produces and real text rarely has: Latin and Cyrillic letters in one
    word ("Cafй": Latin-1 read as cp1251), a capital after a small letter ("мОУЛЧБ": KOI8-R read as cp1251), or
    a Latin word made mostly of accented letters ("Ìîñêâà": cp1251 read as cp1252)."""
    bad = 0
    for word in _WORDS.findall(text):
        cyrillic = sum(1 for char in word if "\u0400" <= char <= "\u04ff")
        accented = sum(1 for char in word if not char.isascii()) - cyrillic
        mixed = 0 < cyrillic < len(word)
        flipped = any(a.islower() and b.isupper() for a, b in zip(word, word[1:], strict=False))
        accented_latin = not cyrillic and accented >= 3 and 2 * accented > len(word)
        bad += mixed or flipped or accented_latin
    return bad


def _looks_like_text(text: str) -> bool:
    """cp1251 decodes almost any byte string, so demand what real text has: no control characters, mostly
    letters, digits, spaces and common punctuation."""
    controls = sum(1 for char in text if ord(char) < 32 and char not in "\t\n\r\f")
    if controls:
        return False
    plain = sum(1 for char in text if char.isalnum() or char.isspace() or char in ".,;:!?-—–()\"'«»№%")
    return plain >= 0.9 * len(text)


def _jsonl_documents(text: str, source: str) -> list[tuple[int | None, Document | str]]:
    """One Document per good line; a bad line becomes its reason and the rest of the file is kept."""
    items: list[tuple[int | None, Document | str]] = []
    # Only "\n" ends a record: str.splitlines would also cut at U+2028, U+2029 and U+0085, which JSON allows
    # unescaped inside strings.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            items.append((number, _jsonl_record(line.removesuffix("\r"), source)))
        except SkipFile as reason:
            items.append((number, str(reason)))
    return items


def _reject_constant(name: str) -> Any:
    raise SkipFile(f"invalid JSON ({name} is not a JSON number)")


def _jsonl_record(line: str, source: str) -> Document:
    try:
        record: Any = json.loads(line, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise SkipFile(f"invalid JSON ({error.msg})") from None
    except RecursionError:
        raise SkipFile("invalid JSON (nested too deeply)") from None
    except ValueError as error:  # e.g. an integer longer than Python's 4,300-digit conversion limit
        raise SkipFile(f"invalid JSON ({error})") from None
    try:
        record = _clean_json(record, 0)
    except RecursionError:
        raise SkipFile(f"metadata nested deeper than {_MAX_METADATA_DEPTH} levels") from None
    if not isinstance(record, dict):
        raise SkipFile("not a JSON object")
    doc_id = record.get("id")
    if doc_id is None or (isinstance(doc_id, str) and not doc_id.strip()):
        raise SkipFile("missing 'id'")
    if not isinstance(doc_id, str | int):
        raise SkipFile("'id' must be a string or an integer")
    body = record.get("text")
    if not isinstance(body, str) or not body.strip():
        raise SkipFile("missing or empty 'text'")
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise SkipFile("'title' must be a string")
    extra = record.get("metadata") or {}
    if not isinstance(extra, dict):
        raise SkipFile("'metadata' must be a JSON object")
    metadata = dict(extra)
    if "source" in metadata:
        metadata["record_source"] = metadata.pop("source")
    metadata["source"] = source
    if record.get("category") is not None:
        metadata["category"] = record["category"]
    return Document(id=str(doc_id), text=body.strip(), title=title.strip(), metadata=metadata)


def _clean_json(value: Any, depth: int) -> Any:
    """`value` with every lone surrogate (a "\\ud800" escape) in its strings and keys turned into U+FFFD;
    RecursionError past _MAX_METADATA_DEPTH levels."""
    if depth > _MAX_METADATA_DEPTH:
        raise RecursionError
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_LONE_SURROGATE.sub("\ufffd", key): _clean_json(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean_json(item, depth + 1) for item in value]
    return value


def markdown_title(text: str) -> str:
    """The first ATX ("# Title") or setext (underlined) heading, whichever comes first; "" when none."""
    candidates = [match for match in (_MD_HEADING.search(text), _MD_SETEXT_HEADING.search(text)) if match]
    if not candidates:
        return ""
    first = min(candidates, key=lambda match: match.start())
    return first.group(1).strip()


def html_to_text(html: str) -> tuple[str, str]:
    """(title, readable text) of an HTML page: scripts, styles and navigation dropped, blocks as paragraphs.

    Block elements become blank-line-separated paragraphs so sentence splitting sees their boundaries, while
    inline elements (links, emphasis) stay inside their sentence. One streaming pass of the standard library's
    parser, so time grows linearly with the page: building a tree cost quadratic time in nesting depth
    (100k nested <div>: 387 s).
    """
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    title = " ".join(" ".join(parser.title).split()) or " ".join(" ".join(parser.h1).split())
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return title, text


class _TextExtractor(HTMLParser):
    """Text, <title> and first <h1> of a page as the parser streams through it (no tree is built)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.h1: list[str] = []
        self._open = {"dropped": 0, "head": 0, "pre": 0, "title": 0, "h1": 0}
        self._title_done = self._h1_done = False

    def _kind(self, tag: str) -> str | None:
        if tag in _DROPPED_HTML_TAGS:
            return "dropped"
        return tag if tag in ("head", "pre", "title", "h1") else None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        kind = self._kind(tag)
        if kind:
            self._open[kind] += 1
        if self._open["dropped"] or self._open["head"]:
            return
        if tag == "br":
            self.parts.append("\n")
        elif tag in _HTML_BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        kind = self._kind(tag)
        hidden = self._open["dropped"] or self._open["head"]
        if kind and self._open[kind]:
            self._open[kind] -= 1
            self._title_done |= kind == "title" and bool(self.title)
            self._h1_done |= kind == "h1" and bool(self.h1)
        if not hidden and tag in _HTML_BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br" and not (self._open["dropped"] or self._open["head"]):
            self.parts.append("\n")
        elif tag in _HTML_BLOCK_TAGS and not (self._open["dropped"] or self._open["head"]):
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._open["dropped"]:
            return
        if self._open["title"] and not self._title_done:
            self.title.append(data)
        if self._open["h1"] and not self._h1_done:
            self.h1.append(data)
        if self._open["head"]:
            return
        # Source line breaks inside a paragraph are just spaces in HTML; only <pre> keeps its layout.
        self.parts.append(data if self._open["pre"] else re.sub(r"\s+", " ", data))
