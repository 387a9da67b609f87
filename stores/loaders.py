"""Read a user's files and folders into Documents, skipping (and reporting) whatever cannot be read.

One bad file never stops a load: it lands in `LoadResult.skipped` with a reason and a warning on the
"cragraph.ingest" logger. Only a path the user named explicitly that does not exist raises, since that is
almost always a typo the user wants to hear about at once.

Document ids: a JSONL record keeps its own `id`; any other file gets its path relative to the folder that was
given (posix separators, e.g. "rivers/volga.md"), or its file name when the file itself was given. Folders are
walked recursively in sorted order; hidden files and folders (names starting with ".") are ignored.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
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
_MD_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_MD_SETEXT_HEADING = re.compile(r"^(\S[^\n]*)\n[ \t]{0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)


@dataclass
class LoadResult:
    """Documents read, in a deterministic order, and (path, reason) for everything skipped."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


class SkipFile(Exception):
    """A file (or a JSONL line) that cannot become a document; the message is the reason shown to the user."""


def load_documents(paths: Sequence[str | Path]) -> LoadResult:
    """Load every supported file under `paths` (files or folders).

    Raises FileNotFoundError for a given path that does not exist; everything else that goes wrong is a skip.
    """
    for given in paths:
        if not Path(given).exists():
            raise FileNotFoundError(f"no such file or folder: {str(given)!r}")
    result = LoadResult()
    first_source: dict[str, str] = {}
    for file_path, doc_id in _candidate_files(paths):
        source = str(file_path)
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


def _candidate_files(paths: Sequence[str | Path]) -> Iterator[tuple[Path, str]]:
    """(file, default document id) for every file under the given paths, folders walked in sorted order."""
    for given in paths:
        root = Path(given)
        if root.is_file():
            yield root, root.name
            continue
        found = []
        for path in root.rglob("*"):
            relative = path.relative_to(root)
            if any(part.startswith(".") for part in relative.parts) or not path.is_file():
                continue
            found.append((relative.as_posix(), path))
        for relative_name, path in sorted(found):
            yield path, relative_name


def _load_file(path: Path, doc_id: str) -> list[tuple[int | None, Document | str]]:
    """(JSONL line number or None, Document or the reason that line was skipped) for one file."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise SkipFile("unsupported type")
    text = read_text(path)
    source = str(path)
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
    return " ".join(re.split(r"[_\-\s]+", path.stem)).strip() or path.stem


def read_text(path: Path) -> str:
    """File contents as text: UTF-8 (with or without BOM), else cp1251 when that yields plausible text.

    Raises SkipFile for empty and binary files.
    """
    data = path.read_bytes()
    if not data.strip():
        raise SkipFile("empty file")
    if b"\x00" in data:
        raise SkipFile("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1251")
    except UnicodeDecodeError:
        text = ""
    if text and _looks_like_text(text):
        return text
    raise SkipFile("binary file (not decodable as UTF-8 or cp1251 text)")


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
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((number, _jsonl_record(line, source)))
        except SkipFile as reason:
            items.append((number, str(reason)))
    return items


def _jsonl_record(line: str, source: str) -> Document:
    try:
        record: Any = json.loads(line)
    except json.JSONDecodeError as error:
        raise SkipFile(f"invalid JSON ({error.msg})") from None
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
    inline elements (links, emphasis) stay inside their sentence.
    """
    from bs4 import BeautifulSoup, NavigableString

    soup = BeautifulSoup(html, "html.parser")
    title = ""
    if soup.title and soup.title.get_text(strip=True):
        title = soup.title.get_text(" ", strip=True)
    for tag in soup.find_all(_DROPPED_HTML_TAGS):
        tag.decompose()
    if not title and (heading := soup.find("h1")):
        title = heading.get_text(" ", strip=True)
    if soup.head:
        soup.head.decompose()
    for node in soup.find_all(string=True):
        # Source line breaks inside a paragraph are just spaces in HTML; only <pre> keeps its layout.
        if type(node) is NavigableString and node.find_parent("pre") is None:
            node.replace_with(re.sub(r"\s+", " ", str(node)))
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    for tag in soup.find_all(_HTML_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    raw = soup.get_text()
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return title, text
