"""Read a user's files and folders into Documents, skipping (and reporting) whatever cannot be read.

One bad file never stops a load: it lands in `LoadResult.skipped` with a reason and a warning on the
"cragraph.ingest" logger. Only a path the user named explicitly that does not exist raises, since that is
almost always a typo the user wants to hear about at once.

Document ids: a JSONL record keeps its own `id`; any other file gets its path relative to its corpus root (posix
separators, e.g. "rivers/volga.md"). A folder given is a root, and a file given alone has its own folder as root,
unless an earlier root (see `roots` in `load_documents`: the index records them) already holds it: then the id is
relative to that root, so one file has one id however it is named on the command line. A PDF page is a document of
its own, "report.pdf#p2" (metadata `page` 2), so a citation can name its page. Folders are
walked recursively in sorted order; hidden files and folders (names starting with ".") are ignored. A symbolic
link is followed only while its target stays inside the folder given (a link to /etc/hostname is skipped and
reported), unless `follow_symlinks=True` asks for every link; either way each real folder is walked once, so a
link loop ends. A folder that cannot be listed is reported as skipped, never dropped silently.

Metadata: `file` is the path of the file read (as given); a JSONL record's own metadata keys are kept as they are
(its `source` stays `source`, and a `file` of its own wins over the path). Headings are metadata, not text: a
Markdown heading (ATX "# ..." or setext) and HTML <h1>..<h6> (and Word's heading styles) leave the body; the first
becomes the title (when the file has none of its own) and later ones are kept in `sections` ({heading, level,
start}: where each one's text begins in the body), which chunking turns into each chunk's `section`.

Whatever bytes a file or its name holds, the text that leaves this module is valid Unicode: lone surrogates
(from a non-UTF-8 file name or a "\\ud800" escape in JSONL) become U+FFFD or a backslash escape, since SQLite,
the tokenizers and JSON output all refuse them.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from stores.types import Document

logger = logging.getLogger("cragraph.ingest")

SUPPORTED_SUFFIXES = (".jsonl", ".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx")
FILE_KEY = "file"
"""The metadata key that holds the path of the file a document was read from (not "source": a user's own key)."""

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
_MD_ATX = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")
_MD_SETEXT_UNDERLINE = re.compile(r"[ \t]{0,3}(=+|-+)[ \t]*")
_MD_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")
_HTML_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_DOCX_HEADING = re.compile(r"(?:heading|заголовок)\s*(\d)", re.IGNORECASE)
_PLAIN_HEADING = re.compile(  # "1. PURPOSE", "3.6 Hallorann Ridge (closed)", "第二章 概况", "一、基本情况"
    r"[ \t]*(?:(?P<number>\d{1,2}\.(?:\d{1,2}(?:\.\d{1,2}){0,2}\.?)?)[ \t]+"
    r"|第[一二三四五六七八九十\d]{1,3}[章节部分][ \t]*|[一二三四五六七八九十]{1,3}、[ \t]*)"
    r"(?P<text>[^|\s][^|]{0,79}?)[ \t]*")
_SENTENCE_END = (".", "。", ":", "：", ";", "；", ",", "，", "!", "?", "！", "？")
_MARK = "\ue000"
"""Stands where a heading was while the body is assembled (a private-use character; any in the input is replaced)."""


@dataclass
class LoadResult:
    """Documents read, in a deterministic order, (path, reason) for everything skipped, and the corpus roots
    (absolute folders) the ids are relative to: the roots passed in, then any new ones, in order."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)


class SkipFile(Exception):
    """A file (or a JSONL line) that cannot become a document; the message is the reason shown to the user."""


def load_documents(paths: Sequence[str | Path], follow_symlinks: bool = False,
                   roots: Sequence[str] = ()) -> LoadResult:
    """Load every supported file under `paths` (files or folders).

    Raises FileNotFoundError for a given path that does not exist; everything else that goes wrong is a skip.
    `follow_symlinks` also follows links whose target lies outside the folder given (off: they are skipped).
    `roots` are corpus roots recorded by earlier loads (absolute folders, `LoadResult.roots`): a file under one
    of them gets its id relative to the first that holds it, so re-indexing a file by another path replaces it.
    """
    for given in paths:
        if not Path(given).exists():
            raise FileNotFoundError(f"no such file or folder: {printable_path(given)!r}")
    result = LoadResult(roots=list(roots))
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


def _id_under(roots: Sequence[str], absolute: str) -> str | None:
    """`absolute` relative to the first root that holds it, or None."""
    for root in roots:
        prefix = root.rstrip("/") + "/"
        if absolute.startswith(prefix) and len(absolute) > len(prefix):
            return absolute[len(prefix):]
    return None


def _absolute_folder(folder: Path) -> str:
    return printable_path(folder.resolve()).replace(os.sep, "/")


def _candidate_files(paths: Sequence[str | Path], follow_symlinks: bool,
                     result: LoadResult) -> Iterator[tuple[Path, str]]:
    """(file, default document id) for every file under the given paths, folders walked in sorted order; a
    folder not under a known root (or a lone file's folder) becomes a root in `result.roots`."""
    for given in paths:
        root = Path(given)
        if root.is_file():
            folder = _absolute_folder(root.parent)
            absolute = folder.rstrip("/") + "/" + printable_path(root.name)
            if _id_under(result.roots, absolute) is None:
                result.roots.append(folder)
            yield root, _id_under(result.roots, absolute) or printable_path(root.name)
            continue
        folder = _absolute_folder(root)
        if _id_under(result.roots, folder + "/x") is None:
            result.roots.append(folder)
        found: list[tuple[str, Path]] = []
        _walk(root, root.resolve(), "", follow_symlinks, {root.resolve()}, found, result)
        for relative_name, path in sorted(found):
            yield path, _id_under(result.roots, folder.rstrip("/") + "/" + relative_name) or relative_name


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
    source = printable_path(path)
    if suffix == ".pdf":
        return [(None, doc) for doc in _pdf_documents(path, doc_id, source)]
    if suffix == ".docx":
        title, body, headings = _docx_parts(path)
    else:
        text = read_text(path, by_line=suffix == ".jsonl")
        if suffix == ".jsonl":
            return _jsonl_documents(text, source)
        if suffix in (".html", ".htm"):
            title, body, headings = html_document(text)
        elif suffix in (".md", ".markdown"):
            title, body, headings = markdown_document(text)
        else:
            title, body, headings = plain_text_document(text, _title_from_stem(path))
    if not body:
        raise SkipFile("no text")
    metadata: dict[str, Any] = {FILE_KEY: source}
    if headings:
        metadata["sections"] = headings
    return [(None, Document(id=doc_id, text=body, title=title or _title_from_stem(path), metadata=metadata))]


def _title_from_stem(path: Path) -> str:
    """"radium_institute.txt" -> "radium institute": a title BM25 and the embedder can read (case kept:
    "Li_Ming.txt" -> "Li Ming")."""
    stem = printable_path(path.stem)  # a non-UTF-8 name must not put a lone surrogate into the title
    return " ".join(re.split(r"[_\-\s]+", stem)).strip() or stem


# ---- PDF and DOCX ---------------------------------------------------------------------------------------------


def _pdf_documents(path: Path, doc_id: str, source: str) -> list[Document]:
    """One Document per PDF page with text: id "<file id>#p<page>", metadata `page` (1-based) and `pages`, the
    title from the PDF's own metadata or the file name. Encrypted (unless openable with the empty password),
    broken and text-less PDFs raise SkipFile."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except Exception as error:  # e.g. an AES PDF without the cryptography package
                raise SkipFile(f"encrypted PDF that cannot be opened ({type(error).__name__}: {error})") from None
            if not opened:
                raise SkipFile("encrypted PDF (it needs a password)")
        info = reader.metadata
        title = info.title if info is not None and isinstance(info.title, str) else ""
        pages = [page.extract_text() or "" for page in reader.pages]
    except SkipFile:
        raise
    except Exception as error:  # pypdf raises many kinds on a damaged file
        raise SkipFile(f"unreadable PDF ({type(error).__name__}: {error})") from None
    title = " ".join(_LONE_SURROGATE.sub("\ufffd", title).split()) or _title_from_stem(path)
    documents = []
    for number, text in enumerate(pages, start=1):
        body = _LONE_SURROGATE.sub("\ufffd", text.replace("\x00", "")).strip()
        if body:
            documents.append(Document(id=f"{doc_id}#p{number}", text=body, title=title,
                                      metadata={FILE_KEY: source, "page": number, "pages": len(pages)}))
    if not documents:
        raise SkipFile("no text in the PDF (scanned pages need OCR first)" if pages else "PDF without pages")
    return documents


def page_base(doc_id: str) -> str | None:
    """"report.pdf" for a PDF page's id "report.pdf#p2"; None for any other id."""
    base, mark, page = doc_id.rpartition("#p")
    return base if mark and base and page.isdigit() else None


def stale_pages(docs: Sequence[Document], existing: Iterable[str]) -> list[str]:
    """Ids in `existing` of pages of a PDF in `docs` that this read did not produce (the file lost pages, or a
    page lost its text): replacing a PDF must drop them, as replacing any other file drops its old text."""
    fresh = {doc.id for doc in docs}
    files = {base for doc in docs if "page" in doc.metadata and (base := page_base(doc.id))}
    return sorted(i for i in existing if i not in fresh and page_base(i) in files)


def _docx_parts(path: Path) -> tuple[str, str, list[dict[str, Any]]]:
    """(title, body, sections) of a Word file: paragraphs and table rows in order, heading-styled paragraphs
    (and the "Title" style) out of the body; the title is the file's core title, else the first heading."""
    import docx
    from docx.table import Table

    try:
        document = docx.Document(str(path))
        blocks: list[str] = []
        headings: list[tuple[int, str]] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells = list(dict.fromkeys(cell.text.strip() for cell in row.cells if cell.text.strip()))
                    if cells:
                        blocks.append(" | ".join(cells))
                continue
            text = item.text.replace(_MARK, "\ufffd")
            style = (item.style.name if item.style is not None else "") or ""
            heading = _DOCX_HEADING.match(style)
            if (heading or style.lower() == "title") and text.strip():
                headings.append((int(heading.group(1)) if heading else 0, text))
                blocks.append(_MARK)
            elif text.strip():
                blocks.append(text)
        title = document.core_properties.title or ""
    except Exception as error:  # not a zip, no document part, bad XML...
        raise SkipFile(f"unreadable DOCX ({type(error).__name__}: {error})") from None
    marked = _LONE_SURROGATE.sub("\ufffd", "\n\n".join(blocks))
    return _with_headings_out(marked, headings, " ".join(title.split()))


# ---- headings ---------------------------------------------------------------------------------------------------


def _with_headings_out(marked: str, headings: list[tuple[int, str]], title: str = ""
                       ) -> tuple[str, str, list[dict[str, Any]]]:
    """(title, body, sections) from a text in which _MARK stands where each of `headings` (level, text) was.

    The pieces between headings are trimmed and joined by blank lines. The first heading is the title when
    `title` is empty (the first heading that repeats a given `title` is dropped too); every other heading is a section
    {heading, level, start}, `start` being where the text under it begins in the body."""
    pieces = marked.split(_MARK)
    if len(pieces) != len(headings) + 1:  # cannot happen: every heading left exactly one mark
        raise ValueError("heading marks out of step")
    parts: list[str] = []
    starts: list[int] = []
    length = 0
    for index, piece in enumerate(pieces):
        if index:
            starts.append(length + 2 if parts else 0)
        piece = piece.strip()
        if piece:
            length += len(piece) + (2 if parts else 0)
            parts.append(piece)
    body = "\n\n".join(parts)
    sections: list[dict[str, Any]] = []
    repeated = bool(title)  # a page's <h1> repeating its <title> is dropped once
    for (level, raw), start in zip(headings, starts, strict=True):
        text = " ".join(raw.split())
        if not text:
            continue
        if not title:
            title = text
        elif repeated and text == title:
            repeated = False
        else:
            sections.append({"heading": text, "level": level, "start": min(start, len(body))})
    return title, body, sections


def markdown_document(text: str) -> tuple[str, str, list[dict[str, Any]]]:
    """(title, body, sections) of a Markdown file: ATX ("## Title") and setext (underlined) heading lines leave
    the body, outside fenced code blocks; the first heading is the title, later ones are sections."""
    text = text.replace(_MARK, "\ufffd")
    lines = text.split("\n")
    out: list[str] = []
    headings: list[tuple[int, str]] = []
    fence = ""
    index = 0
    while index < len(lines):
        line = lines[index].rstrip("\r")
        opening = _MD_FENCE.match(line)
        if fence:
            if opening and opening.group(1) == fence:
                fence = ""
            out.append(lines[index])
            index += 1
            continue
        if opening:
            fence = opening.group(1)
            out.append(lines[index])
            index += 1
            continue
        atx = _MD_ATX.fullmatch(line)
        underline = (_MD_SETEXT_UNDERLINE.fullmatch(lines[index + 1].rstrip("\r"))
                     if index + 1 < len(lines) else None)
        paragraph_start = not out or not out[-1].strip() or out[-1] == _MARK
        if atx and atx.group(2).strip():
            headings.append((len(atx.group(1)), atx.group(2)))
            out += ["", _MARK, ""]
            index += 1
        elif underline and line.strip() and paragraph_start and not line.lstrip().startswith(("-", "*", "+", ">")):
            headings.append((1 if underline.group(1)[0] == "=" else 2, line.strip()))
            out += ["", _MARK, ""]
            index += 2
        else:
            out.append(lines[index])
            index += 1
    return _with_headings_out("\n".join(out), headings)


def markdown_title(text: str) -> str:
    """The first ATX ("# Title") or setext (underlined) heading, whichever comes first; "" when none."""
    return markdown_document(text)[0]


def plain_text_document(text: str, title: str) -> tuple[str, str, list[dict[str, Any]]]:
    """(title, body, sections) of a plain-text file: numbered heading lines ("2. HISTORY", "3.6 Hallorann Ridge",
    "第二章 ...", "一、...") leave the body as sections, so a report in .txt has sections as a Markdown one does. A
    line is a heading when it is short, ends no sentence and is not an item of a numbered list of such lines; a
    "2.1" line is a heading wherever it stands."""
    text = text.replace(_MARK, "\ufffd")
    lines = text.split("\n")
    out: list[str] = []
    headings: list[tuple[int, str]] = []
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r")
        match = _PLAIN_HEADING.fullmatch(line)
        if match and not match.group("text").endswith(_SENTENCE_END) and not _in_numbered_list(lines, index, match):
            number = match.group("number") or ""
            headings.append((number.rstrip(".").count(".") + 1, line.strip()))
            out += ["", _MARK, ""]
        else:
            out.append(raw)
    return _with_headings_out("\n".join(out), headings, title)


def _in_numbered_list(lines: list[str], index: int, heading: re.Match[str]) -> bool:
    """A one-level "N." line whose neighbour (blank lines skipped) is "N-1." or "N+1." of the same short kind: the
    items of a numbered list ("1. Gateway", "2. Ledger"), not a heading after a list of sentences."""
    number = heading.group("number") or ""
    if not number or "." in number.rstrip("."):
        return False
    before = next((line for line in lines[index - 1::-1] if line.strip()), "") if index else ""
    after = next((line for line in lines[index + 1:] if line.strip()), "")
    for line, step in ((before, -1), (after, 1)):
        other = _PLAIN_HEADING.fullmatch(line.rstrip("\r"))
        if other and (other.group("number") or "").rstrip(".") == str(int(number.rstrip(".")) + step) \
                and not other.group("text").endswith(_SENTENCE_END):
            return True
    return False


def read_text(path: Path, by_line: bool = False) -> str:
    """File contents as text: UTF-8/16/32 as their byte-order mark says, else UTF-8, else UTF-8 with each
    invalid byte replaced by U+FFFD when the file is overwhelmingly UTF-8 (a few damaged bytes among many good
    multi-byte characters; a warning says how many), else the single-byte encoding (cp1251, cp1252, KOI8-R,
    Latin-1) whose decoding reads most like real words.

    Raises SkipFile for empty and binary files. A NUL makes a file binary, except with `by_line` (JSONL), whose
    lines are judged one by one.
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
            if "\x00" in text and not by_line:
                raise SkipFile("binary file (contains NUL characters)")
            return _LONE_SURROGATE.sub("\ufffd", text)
    if not data.strip():
        raise SkipFile("empty file")
    if b"\x00" in data and not by_line:
        raise SkipFile("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    repaired, replaced = _mostly_utf8(data)
    if repaired is not None:
        logger.warning("%s: %d byte%s not valid UTF-8, each replaced by U+FFFD", printable_path(path), replaced,
                       "" if replaced == 1 else "s")
        return repaired
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


def _mostly_utf8(data: bytes) -> tuple[str | None, int]:
    """(the data as UTF-8 with its invalid bytes as U+FFFD, how many) when its good multi-byte characters
    outnumber its invalid bytes _UTF8_MAJORITY to one, else (None, count). A single-byte file (Latin-1 "café",
    cp1251 Russian) has almost no valid multi-byte sequence, so it still goes to the single-byte decoders."""
    text = data.decode("utf-8", "surrogateescape")  # each invalid byte becomes one U+DC80..U+DCFF
    invalid = len(_ESCAPED_BYTE.findall(text))
    multibyte = sum(1 for char in text if char > "\x7f") - invalid
    if multibyte < _UTF8_MAJORITY * invalid:
        return None, invalid
    return _ESCAPED_BYTE.sub("\ufffd", text), invalid


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_UTF8_MAJORITY = 4
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
        if "\x00" in line:
            items.append((number, "binary data (contains NUL bytes)"))
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
    metadata.setdefault(FILE_KEY, source)  # the record's own keys are never renamed or overwritten
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


def html_to_text(html: str) -> tuple[str, str]:
    """(title, readable text) of an HTML page; see `html_document`, which also returns the headings."""
    title, body, _ = html_document(html)
    return title, body


def html_document(html: str) -> tuple[str, str, list[dict[str, Any]]]:
    """(title, readable text, sections) of an HTML page: scripts, styles and navigation dropped, blocks as
    paragraphs, <h1>..<h6> out of the text (the title is <title>, else the first <h1>, else the first heading;
    the other headings are sections).

    Block elements become blank-line-separated paragraphs so sentence splitting sees their boundaries, while
    inline elements (links, emphasis) stay inside their sentence. One streaming pass of the standard library's
    parser, so time grows linearly with the page: building a tree cost quadratic time in nesting depth
    (100k nested <div>: 387 s).
    """
    parser = _TextExtractor()
    parser.feed(html.replace(_MARK, "\ufffd"))
    parser.close()
    parser.end_heading()
    title = " ".join(" ".join(parser.title).split()) or " ".join(" ".join(parser.h1).split())
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return _with_headings_out(text, parser.headings, title)


class _TextExtractor(HTMLParser):
    """Text, <title>, first <h1> and headings of a page as the parser streams through it (no tree is built)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.h1: list[str] = []
        self.headings: list[tuple[int, str]] = []
        self._heading: tuple[int, list[str]] | None = None
        self._open = {"dropped": 0, "head": 0, "pre": 0, "title": 0, "h1": 0}
        self._title_done = self._h1_done = False

    def _kind(self, tag: str) -> str | None:
        if tag in _DROPPED_HTML_TAGS:
            return "dropped"
        return tag if tag in ("head", "pre", "title", "h1") else None

    def _hidden(self) -> int:
        return self._open["dropped"] or self._open["head"]

    def end_heading(self) -> None:
        """Close the heading being read: its text leaves the body, a mark stays in its place."""
        if self._heading is not None:
            level, text = self._heading
            self._heading = None
            self.headings.append((level, "".join(text)))
            self.parts.append("\n\n" + _MARK + "\n\n")

    def _break(self, tag: str) -> None:
        if self._heading is not None:
            self._heading[1].append(" ")
        elif tag == "br":
            self.parts.append("\n")
        elif tag in _HTML_BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        kind = self._kind(tag)
        if kind:
            self._open[kind] += 1
        if self._hidden():
            return
        if tag in _HTML_HEADINGS and self._heading is None:
            self._heading = (int(tag[1]), [])
        else:
            self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        kind = self._kind(tag)
        hidden = self._hidden()
        if kind and self._open[kind]:
            self._open[kind] -= 1
            self._title_done |= kind == "title" and bool(self.title)
            self._h1_done |= kind == "h1" and bool(self.h1)
        if hidden:
            return
        if tag in _HTML_HEADINGS and self._heading is not None:
            self.end_heading()
        elif tag in _HTML_BLOCK_TAGS:
            self._break(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._hidden() and (tag == "br" or tag in _HTML_BLOCK_TAGS):
            self._break(tag)

    def handle_data(self, data: str) -> None:
        if self._open["dropped"]:
            return
        if self._open["title"] and not self._title_done:
            self.title.append(data)
        if self._open["h1"] and not self._h1_done:
            self.h1.append(data)
        if self._open["head"]:
            return
        if self._heading is not None:
            self._heading[1].append(data)
            return
        # Source line breaks inside a paragraph are just spaces in HTML; only <pre> keeps its layout.
        self.parts.append(data if self._open["pre"] else re.sub(r"\s+", " ", data))
