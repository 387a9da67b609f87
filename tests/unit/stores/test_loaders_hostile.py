"""Regression tests for issue 14: hostile or odd files must be skipped one by one (line by line in JSONL), never
abort a load, never drop their good neighbours, and never reach outside the folder being indexed."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import pytest

from stores.loaders import html_to_text, load_documents, read_text
from tests.fixtures.files import write_file


def _jsonl(*records: str) -> str:
    return "\n".join(records) + "\n"


GOOD = json.dumps({"id": "good", "text": "Marie Curie founded the Radium Institute."})


# ---- symbolic links ------------------------------------------------------------------------------------------


def test_a_symlink_out_of_the_folder_is_skipped_and_reported(tmp_path: Path) -> None:
    outside = write_file(tmp_path / "secret" / "host.txt", "The server's secret host name.")
    write_file(tmp_path / "d" / "inside.txt", "Inside text.")
    (tmp_path / "d" / "host.txt").symlink_to(outside)
    (tmp_path / "d" / "etc").symlink_to(outside.parent, target_is_directory=True)
    result = load_documents([tmp_path / "d"])
    assert [doc.id for doc in result.documents] == ["inside.txt"]
    reasons = dict(result.skipped)
    assert "outside the folder" in reasons[str(tmp_path / "d" / "host.txt")]
    assert "outside the folder" in reasons[str(tmp_path / "d" / "etc")]
    followed = load_documents([tmp_path / "d"], follow_symlinks=True)
    assert sorted(doc.id for doc in followed.documents) == ["etc/host.txt", "host.txt", "inside.txt"]


def test_a_symlink_inside_the_folder_is_kept_and_a_loop_ends(tmp_path: Path) -> None:
    write_file(tmp_path / "d" / "a" / "x.txt", "Text of x.")
    (tmp_path / "d" / "a" / "loop").symlink_to(tmp_path / "d", target_is_directory=True)
    (tmp_path / "d" / "alias.txt").symlink_to(tmp_path / "d" / "a" / "x.txt")
    for follow in (False, True):
        result = load_documents([tmp_path / "d"], follow_symlinks=follow)
        assert [doc.id for doc in result.documents] == ["a/x.txt", "alias.txt"]


def test_an_unreadable_folder_is_reported_not_skipped_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_file(tmp_path / "d" / "ok.txt", "Fine.")
    locked = tmp_path / "d" / "locked"
    write_file(locked / "hidden.txt", "Cannot be read.")
    locked.chmod(0)
    try:
        if os.geteuid() == 0:  # root reads any folder: make the OS refuse this one as it would a normal user
            real_scandir = os.scandir

            def refusing(path: os.PathLike[str] | str = ".") -> object:
                if Path(path) == locked:
                    raise PermissionError(13, "Permission denied", str(path))
                return real_scandir(path)

            monkeypatch.setattr(os, "scandir", refusing)
        result = load_documents([tmp_path / "d"])
    finally:
        locked.chmod(0o755)
    assert [doc.id for doc in result.documents] == ["ok.txt"]
    ((source, reason),) = result.skipped
    assert source == str(locked) and reason.startswith("unreadable folder")


def test_a_non_utf8_file_name_is_indexed_under_an_escaped_id(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "wb") as handle:
        handle.write(b"A cafe in Paris.")
    write_file(folder / "ok.txt", "Fine.")
    result = load_documents([folder])
    assert [doc.id for doc in result.documents] == ["caf\\xe9.txt", "ok.txt"]
    for doc in result.documents:
        doc.id.encode("utf-8")
        doc.metadata["file"].encode("utf-8")
        doc.title.encode("utf-8")  # the title comes from the name too (found by tests/fuzz)


# ---- JSONL -------------------------------------------------------------------------------------------------


def test_one_bad_jsonl_line_skips_only_that_line(tmp_path: Path) -> None:
    huge = '{"id": "big", "text": "x", "metadata": {"n": ' + "9" * 5000 + "}}"
    deep = '{"id": "deep", "text": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}"
    nan = '{"id": "nan", "text": "x", "metadata": {"score": NaN}}'
    inf = '{"id": "inf", "text": "x", "metadata": {"score": -Infinity}}'
    nested = '{"id": "nested", "text": "x", "metadata": ' + "[" * 500 + "]" * 500 + "}"
    path = write_file(tmp_path / "c.jsonl", _jsonl(huge, deep, nan, GOOD, inf, nested))
    result = load_documents([path])
    assert [doc.id for doc in result.documents] == ["good"]
    lines = sorted(int(reason.split(":")[0].removeprefix("line ")) for _, reason in result.skipped)
    assert lines == [1, 2, 3, 5, 6]
    assert all(source == str(path) for source, _ in result.skipped)


def test_lone_surrogates_in_jsonl_become_replacement_characters(tmp_path: Path) -> None:
    line = '{"id": "s\\ud800", "text": "half \\udfff a pair", "metadata": {"k\\udc00": ["\\ud83d"]}}'
    pair = json.dumps({"id": "emoji", "text": "a real pair \U0001f600"})
    result = load_documents([write_file(tmp_path / "s.jsonl", _jsonl(line, pair))])
    first, second = result.documents
    assert (first.id, first.text, first.metadata["k\ufffd"]) == ("s\ufffd", "half \ufffd a pair", ["\ufffd"])
    assert second.text == "a real pair \U0001f600"
    json.dumps([d.__dict__ for d in result.documents], ensure_ascii=False).encode("utf-8")


def test_jsonl_records_are_split_on_newlines_only(tmp_path: Path) -> None:
    text = "line\u2028separator\u2029paragraph\u0085next"
    raw = json.dumps({"id": "sep", "text": text}, ensure_ascii=False) + "\r\n" + GOOD + "\n"
    result = load_documents([write_file(tmp_path / "u.jsonl", raw)])
    assert [(doc.id, doc.text) for doc in result.documents][0] == ("sep", text)
    assert [doc.id for doc in result.documents] == ["sep", "good"] and result.skipped == []


# ---- encodings ---------------------------------------------------------------------------------------------

LATIN = "Le garçon était très fâché: café, crème brûlée et Ålesund."
RUSSIAN = "Мост через Неву построили в 1850 году; это первый постоянный мост."


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (LATIN, "latin-1"),
        (LATIN, "cp1252"),
        (RUSSIAN, "koi8_r"),
        (RUSSIAN, "cp1251"),
        (LATIN, "utf-16"),
        (RUSSIAN, "utf-16"),
        (LATIN, "utf-32"),
        (RUSSIAN, "utf-32"),
        (RUSSIAN, "utf-16-be"),
    ],
)
def test_single_byte_and_bom_encodings_are_read(tmp_path: Path, text: str, encoding: str) -> None:
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    assert read_text(write_file(tmp_path / "f.txt", data)) == text


# ---- HTML --------------------------------------------------------------------------------------------------


def test_deeply_nested_html_is_parsed_in_linear_time() -> None:
    started = time.perf_counter()
    title, text = html_to_text("<title>Deep</title>" + "<div>x" * 100_000 + "</div>" * 100_000)
    assert time.perf_counter() - started < 20  # was 387 s with a tree builder
    assert title == "Deep" and text.split() == ["Deep"] + ["x"] * 100_000  # no <head>: the title is text too


def test_html_blocks_pre_and_entities() -> None:
    title, text = html_to_text(
        "<html><head><title> A &amp; B </title><meta x=1></head><body>"
        "<p>one<br/>two</p><pre>a   b\n c</pre><nav>menu</nav><hr>"
        "<noscript>no</noscript>end &lt;tag&gt;</body></html>"
    )
    assert title == "A & B"
    assert text == "one\ntwo\n\na b\nc\n\nend <tag>"


# ---- issue 45: JSONL judged by line, damaged UTF-8 ---------------------------------------------------------------


def test_a_nul_byte_in_one_jsonl_line_skips_that_line_only(tmp_path: Path) -> None:
    good = [json.dumps({"id": f"d{i}", "text": f"Record number {i} is fine."}) for i in range(4)]
    lines = [*good[:2], '{"id": "bad", "text": "a NUL \x00 here"}', *good[2:]]
    write_file(tmp_path / "mixed.jsonl", "\n".join(lines).encode("utf-8"))
    result = load_documents([tmp_path])
    assert [doc.id for doc in result.documents] == ["d0", "d1", "d2", "d3"]
    assert [(Path(source).name, reason) for source, reason in result.skipped] == [
        ("mixed.jsonl", "line 3: binary data (contains NUL bytes)")]
    write_file(tmp_path / "mixed.jsonl", ("\n".join(lines) + "\n").encode("utf-16"))  # the same as UTF-16
    assert [doc.id for doc in load_documents([tmp_path]).documents] == ["d0", "d1", "d2", "d3"]


def test_a_few_invalid_bytes_in_a_utf8_file_are_replaced_and_counted(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    text = "Мост через Неву построили в 1850 году. Le café est fermé. "
    path = write_file(tmp_path / "damaged.txt", text.encode() + b"\xff\xfe\xfa and caf\xc3(" + text.encode())
    with caplog.at_level(logging.WARNING, logger="cragraph.ingest"):
        read = read_text(path)
    assert read == text + "\ufffd\ufffd\ufffd and caf\ufffd(" + text  # not "яюъ" and "Г(" (cp1251)
    assert "damaged.txt: 4 bytes not valid UTF-8, each replaced by U+FFFD" in caplog.text
    for words, encoding in ((LATIN, "latin-1"), (LATIN, "cp1252"), (RUSSIAN, "cp1251"), (RUSSIAN, "koi8_r")):
        assert read_text(write_file(tmp_path / "f.txt", words.encode(encoding))) == words  # still single-byte
