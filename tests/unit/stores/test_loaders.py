"""Reading files and folders into Documents, and every reason a file is skipped."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from stores import loaders
from stores.loaders import load_documents
from tests.fixtures.files import write_file

SAMPLES = Path(__file__).resolve().parents[3] / "samples"




def test_jsonl_records_become_documents_with_metadata(tmp_path: Path) -> None:
    lines = [
        {"id": "a", "title": "Volga", "text": "The Volga is long.", "category": "river",
         "metadata": {"country": "Russia", "source": "wiki"}},
        {"id": 7, "text": "No title here."},
    ]
    path = write_file(tmp_path / "docs.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n\n")
    result = load_documents([path])
    assert result.skipped == []
    first, second = result.documents
    assert (first.id, first.title, first.text) == ("a", "Volga", "The Volga is long.")
    assert first.metadata == {"country": "Russia", "source": "wiki", "file": str(path), "category": "river"}
    assert (second.id, second.title, second.metadata) == ("7", "", {"file": str(path)})


def test_bad_jsonl_lines_are_skipped_with_their_line_number(tmp_path: Path) -> None:
    content = "\n".join([
        json.dumps({"id": "good1", "text": "Fine."}),
        "{not json",
        json.dumps(["a", "list"]),
        json.dumps({"id": "no-text"}),
        json.dumps({"text": "no id"}),
        json.dumps({"id": "bad-meta", "text": "x", "metadata": [1]}),
        json.dumps({"id": "good2", "text": "Also fine."}),
    ])
    path = write_file(tmp_path / "mixed.jsonl", content)
    result = load_documents([path])
    assert [doc.id for doc in result.documents] == ["good1", "good2"]
    reasons = [reason for source, reason in result.skipped]
    assert all(source == str(path) for source, _ in result.skipped)
    assert [reason.split(":")[0] for reason in reasons] == ["line 2", "line 3", "line 4", "line 5", "line 6"]
    assert "invalid JSON" in reasons[0]
    assert "text" in reasons[2] and "id" in reasons[3] and "metadata" in reasons[4]


def test_txt_title_is_the_readable_file_stem(tmp_path: Path) -> None:
    path = write_file(tmp_path / "river_bridges.txt", "  Bridges cross rivers.\n")
    (doc,) = load_documents([path]).documents
    assert (doc.id, doc.title, doc.text, doc.metadata) == (
        "river_bridges.txt", "river bridges", "Bridges cross rivers.", {"file": str(path)})


def test_markdown_title_is_the_first_heading(tmp_path: Path) -> None:
    with_heading = write_file(tmp_path / "a.md", "Intro line.\n\n## The Volga River ##\n\nText.\n\n# Later\n")
    setext = write_file(tmp_path / "b.md", "Kazan Bridge\n============\n\nText.")
    plain = write_file(tmp_path / "c_notes.md", "Just text, no heading.")
    docs = load_documents([with_heading, setext, plain]).documents
    assert [doc.title for doc in docs] == ["The Volga River", "Kazan Bridge", "c notes"]
    assert docs[0].text.startswith("Intro line.")


def test_html_drops_script_style_and_navigation(tmp_path: Path) -> None:
    html = """<html><head><title>Bridges of Kazan</title><style>p {color: red}</style></head>
    <body><nav><a href="/">Home</a> Menu</nav><script>var hidden = 1;</script>
    <h1>Heading</h1><p>The Millennium Bridge crosses
    the <a href="#">Kazanka</a> river.</p><p>It opened in 2005.</p><!-- a comment --></body></html>"""
    (doc,) = load_documents([write_file(tmp_path / "page.html", html)]).documents
    assert doc.title == "Bridges of Kazan"
    assert doc.text == "The Millennium Bridge crosses the Kazanka river.\n\nIt opened in 2005."


def test_html_title_falls_back_to_h1_then_stem(tmp_path: Path) -> None:
    with_h1 = write_file(tmp_path / "x.htm", "<body><h1>Neva Bridges</h1><p>Text.</p></body>")
    bare = write_file(tmp_path / "bare_page.html", "<body><p>Only text.</p></body>")
    assert [doc.title for doc in load_documents([with_h1, bare]).documents] == ["Neva Bridges", "bare page"]


def test_folders_are_walked_recursively_in_sorted_order(tmp_path: Path) -> None:
    write_file(tmp_path / "b" / "z.txt", "Zed.")
    write_file(tmp_path / "a.md", "# A\nAlpha.")
    write_file(tmp_path / "b" / "a.txt", "Bee a.")
    write_file(tmp_path / ".hidden" / "secret.txt", "Hidden.")
    write_file(tmp_path / ".notes.txt", "Hidden too.")
    result = load_documents([tmp_path])
    assert [doc.id for doc in result.documents] == ["a.md", "b/a.txt", "b/z.txt"]
    assert result.skipped == []
    assert [doc.id for doc in load_documents([str(tmp_path)]).documents] == ["a.md", "b/a.txt", "b/z.txt"]


def test_each_skip_reason_is_reported_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_file(tmp_path / "empty.txt", "")
    write_file(tmp_path / "blank.md", "  \n\n ")
    write_file(tmp_path / "nul.txt", b"abc\x00def")
    write_file(tmp_path / "latin.txt", bytes(range(128, 256)) * 4 + b"\x01\x02")
    write_file(tmp_path / "image.png", b"\x89PNG")
    write_file(tmp_path / "script.html", "<html><body><script>only()</script></body></html>")
    write_file(tmp_path / "ok.txt", "Kept.")
    with caplog.at_level(logging.WARNING, logger="cragraph.ingest"):
        result = load_documents([tmp_path])
    assert [doc.id for doc in result.documents] == ["ok.txt"]
    reasons = {Path(source).name: reason for source, reason in result.skipped}
    assert reasons == {
        "blank.md": "empty file",
        "empty.txt": "empty file",
        "image.png": "unsupported type",
        "latin.txt": "binary file (not decodable as UTF-8, UTF-16, UTF-32 or single-byte text)",
        "nul.txt": "binary file (contains NUL bytes)",
        "script.html": "no text",
    }
    logged = " ".join(record.getMessage() for record in caplog.records if record.name == "cragraph.ingest")
    for name in reasons:
        assert name in logged


def test_cp1251_text_is_decoded(tmp_path: Path) -> None:
    path = write_file(tmp_path / "old.txt", "Мост через Неву, построенный в 1850 году.".encode("cp1251"))
    (doc,) = load_documents([path]).documents
    assert doc.text == "Мост через Неву, построенный в 1850 году."


def test_utf8_bom_is_removed(tmp_path: Path) -> None:
    path = write_file(tmp_path / "bom.md", "\ufeff# Title\nBody.".encode())
    (doc,) = load_documents([path]).documents
    assert doc.title == "Title" and doc.text == "Body."


def test_missing_explicit_path_raises_naming_it(tmp_path: Path) -> None:
    write_file(tmp_path / "ok.txt", "Kept.")
    missing = tmp_path / "nope" / "missing.txt"
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        load_documents([tmp_path, missing])


def test_duplicate_ids_keep_the_first(tmp_path: Path) -> None:
    first = write_file(tmp_path / "one.jsonl", json.dumps({"id": "x", "text": "First."}))
    second = write_file(tmp_path / "two.jsonl", "\n".join([json.dumps({"id": "y", "text": "Other."}),
                                                         json.dumps({"id": "x", "text": "Second."})]))
    result = load_documents([first, second])
    assert [(doc.id, doc.text) for doc in result.documents] == [("x", "First."), ("y", "Other.")]
    ((source, reason),) = result.skipped
    assert source == str(second)
    assert reason.startswith("line 2: duplicate document id 'x'") and str(first) in reason


def test_one_failing_file_does_not_stop_the_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_parser(html: str) -> tuple[str, str, list]:
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(loaders, "html_document", broken_parser)
    write_file(tmp_path / "a.html", "<p>x</p>")
    write_file(tmp_path / "b.txt", "Fine.")
    result = load_documents([tmp_path])
    assert [doc.id for doc in result.documents] == ["b.txt"]
    assert result.skipped == [(str(tmp_path / "a.html"), "unreadable: RuntimeError: parser exploded")]


def test_bundled_samples_load_with_the_broken_files_skipped() -> None:
    result = load_documents([SAMPLES / "corpus", SAMPLES / "broken"])
    assert 12 <= len(result.documents) <= 20
    languages_seen = {doc.id.split("/")[0] for doc in result.documents if "/" in doc.id}
    assert languages_seen == {"en", "ru", "zh"}
    assert sorted(Path(source).name for source, _ in result.skipped) == ["binary.txt", "empty.md"]
    assert any(doc.metadata.get("category") == "institute" for doc in result.documents)
    questions = (SAMPLES / "questions.txt").read_text(encoding="utf-8").split("\n")
    assert len([line for line in questions if line.strip()]) >= 6
