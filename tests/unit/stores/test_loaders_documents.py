"""Answers and documents (issue 16): headings are metadata, not text; a JSONL record's `source` is its own; a
filter on a field no document has says so; PDF pages and Word files are read; one file keeps one id however it
is named on the command line. Indexes are built through the real `cragraph index` with a tiny real embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cragraph.cli.main import main
from stores.bundle import IndexBundle
from stores.chunking import chunk_document
from stores.loaders import load_documents
from tests.fixtures.documents import pdf_bytes, write_docx
from tests.fixtures.files import write_file
from tests.fixtures.graph import use_keyword_evaluator


def _index(paths: list[Path], index: Path, embedder: Path) -> None:
    assert main(["index", *map(str, paths), "--index", str(index), "--embedder", str(embedder), "--quiet"]) == 0


def _search(index: Path, question: str, capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict]:
    capsys.readouterr()
    assert main(["search", question, "--index", str(index), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


# ---- headings ------------------------------------------------------------------------------------------------


def test_markdown_headings_leave_the_text_for_title_and_sections(tmp_path: Path) -> None:
    path = write_file(tmp_path / "helix.md", (
        "# Helix Robotics\n"
        "Helix Robotics was founded in 2009 in Eindhoven, the Netherlands. Its first product was a welding arm.\n"
        "\n## History\n\nIt opened a second plant in 2015.\n\n"
        "Products\n--------\nThe HX-2 arm followed.\n"
        "```\n# a comment in code, not a heading\n```\n"
    ))
    (doc,) = load_documents([path]).documents
    assert doc.title == "Helix Robotics"
    assert "#" not in doc.text.replace("# a comment", "") and "Helix Robotics was" in doc.text
    assert "History" not in doc.text and "Products" not in doc.text and "--------" not in doc.text
    assert "# a comment in code, not a heading" in doc.text  # fenced code keeps its lines
    sections = doc.metadata["sections"]
    assert [(s["heading"], s["level"]) for s in sections] == [("History", 2), ("Products", 2)]
    assert doc.text[sections[0]["start"]:].startswith("It opened a second plant")
    assert doc.text[sections[1]["start"]:].startswith("The HX-2 arm followed.")


def test_html_headings_leave_the_text(tmp_path: Path) -> None:
    path = write_file(tmp_path / "page.html", (
        "<html><head><title>Helix Robotics</title></head><body><h1>Helix Robotics</h1>"
        "<p>Helix Robotics was founded in 2009.</p><h2>History <em>of</em> plants</h2><p>A plant opened in 2015.</p>"
        "</body></html>"
    ))
    (doc,) = load_documents([path]).documents
    assert doc.title == "Helix Robotics"
    assert doc.text == "Helix Robotics was founded in 2009.\n\nA plant opened in 2015."
    ((section),) = doc.metadata["sections"]
    assert section["heading"] == "History of plants" and section["level"] == 2
    assert doc.text[section["start"]:] == "A plant opened in 2015."


def test_numbered_headings_of_a_plain_text_report_leave_its_text(tmp_path: Path) -> None:
    path = write_file(tmp_path / "station_report.txt", (
        "1. STATIONS\n\n3.6 Harrow Ridge (closed)\nThe station closed in 2021.\nIts antenna moved:\n"
        "1. Dish\n2. Mount\n3. Feed\n\n- last bullet of a list above a heading\n\n2. STAFF\n"
        "14 October 2023, meeting room\n2011 | Vera Lune | chair\n"
        "8. Publish a plan by 2026.\n9. Resources\nThe budget is small.\n\n"
        "二、费用\n费用由公司承担。\n"
    ))
    (doc,) = load_documents([path]).documents
    assert doc.title == "station report"
    headings = [(s["heading"], s["level"]) for s in doc.metadata["sections"]]
    assert headings == [("1. STATIONS", 1), ("3.6 Harrow Ridge (closed)", 2), ("2. STAFF", 1), ("9. Resources", 1),
                        ("二、费用", 1)]
    assert "3.6" not in doc.text and "1. Dish\n2. Mount\n3. Feed" in doc.text  # a numbered list stays text
    assert "14 October 2023" in doc.text and "2011 | Vera Lune" in doc.text and "8. Publish a plan" in doc.text
    assert doc.text[doc.metadata["sections"][1]["start"]:].startswith("The station closed in 2021.")


def test_a_chunk_keeps_the_section_it_starts_under(tmp_path: Path) -> None:
    body = "Intro sentence about the company and its founders.\n\n## Plants\n\n" + " ".join(
        f"Plant number {i} opened in the year {2000 + i}." for i in range(12))
    (doc,) = load_documents([write_file(tmp_path / "a.md", "# Helix\n\n" + body)]).documents

    def embed(sentences: list[str]) -> np.ndarray:  # the intro and the plants are two topics
        return np.array([[1.0, 0.0] if "Intro" in s else [0.0, 1.0] for s in sentences], dtype=np.float32)

    chunks = chunk_document(doc, embed, min_chars=0, max_chars=200, whole_doc_chars=0)
    assert len(chunks) >= 2 and "section" not in chunks[0].metadata and "sections" not in chunks[0].metadata
    assert all(chunk.metadata["section"] == "Plants" for chunk in chunks[1:])


def test_no_chunk_runs_from_one_section_into_the_next_and_each_keeps_its_heading_path(tmp_path: Path) -> None:
    text = ("# Platform\n\nThe platform stores sensor data.\n\n## Components\n\nIt consists of two components:\n\n"
            "- Portico\n- Tallyroll\n\n### 4.2 Kilnhouse\n\nKilnhouse is led by Saoirse Lindqvist\n\n## History\n\n"
            "Release 1.0 came out in 2016.")
    (doc,) = load_documents([write_file(tmp_path / "a.md", text)]).documents

    def embed(sentences: list[str]) -> np.ndarray:  # one topic throughout: only the sections keep chunks apart
        return np.ones((len(sentences), 2), dtype=np.float32)

    chunks = chunk_document(doc, embed, min_chars=200, max_chars=400, whole_doc_chars=0)
    assert [c.metadata.get("section_path") for c in chunks] == [
        None, ["Components"], ["Components", "4.2 Kilnhouse"], ["History"]]
    assert chunks[2].text == "Kilnhouse is led by Saoirse Lindqvist" and chunks[2].subject == "Kilnhouse"
    assert chunks[2].passage.startswith("Platform › Components › 4.2 Kilnhouse. Kilnhouse is led")
    assert chunks[0].subject == "Platform", "outside any section a chunk is about its document"


def test_txt_titles_keep_the_file_names_case(tmp_path: Path) -> None:
    docs = load_documents([write_file(tmp_path / "Li_Ming.txt", "Li Ming was born in Harbin."),
                           write_file(tmp_path / "Helix Robotics.txt", "Founded in 2009.")]).documents
    assert [doc.title for doc in docs] == ["Li Ming", "Helix Robotics"]


# ---- metadata: a record's source is its own; unknown filter fields ----------------------------------------------


def test_a_jsonl_source_stays_source_and_a_filter_finds_it(tmp_path: Path, tiny_embedder_dir: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_file(tmp_path / "docs" / "kb.jsonl", "\n".join(json.dumps(record) for record in [
        {"id": "a", "text": "The river flows through the city.", "metadata": {"source": "kb"}},
        {"id": "b", "text": "The bridge crosses the river.", "metadata": {"source": "web"}},
    ]))
    (first, _) = load_documents([corpus]).documents
    assert first.metadata == {"source": "kb", "file": str(corpus)}
    index = tmp_path / "idx"
    _index([corpus.parent], index, tiny_embedder_dir)
    hits = _search(index, "river", capsys, "--filter", "source=kb")
    assert [hit["chunk"]["doc_id"] for hit in hits] == ["a"]


def test_a_filter_on_a_field_no_document_has_says_it_is_unknown(tmp_path: Path, tiny_embedder_dir: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_file(tmp_path / "docs" / "a.txt", "The river flows through the city.")
    index = tmp_path / "idx"
    _index([corpus.parent], index, tiny_embedder_dir)
    capsys.readouterr()
    assert main(["search", "river", "--index", str(index), "--filter", "sorce=kb"]) == 1
    err = capsys.readouterr().err
    assert "unknown filter field 'sorce'" in err and "known fields:" in err and "file" in err and "language" in err
    assert main(["search", "river", "--index", str(index), "--filter", "language=xx"]) == 0  # known field: no hits
    assert "no results" in capsys.readouterr().out


# ---- PDF and DOCX -----------------------------------------------------------------------------------------------


def test_a_two_page_pdf_is_cited_by_page(tmp_path: Path, tiny_embedder_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "docs"
    write_file(corpus / "report.pdf", pdf_bytes([
        ["Helix Robotics builds welding arms for car makers.", "The company is based in Eindhoven."],
        ["The river institute was founded by Marie Curie in 1909.", "It studies radium and polonium."],
    ], title="Helix Annual Report"))
    write_file(corpus / "notes.txt", "The bridge crosses the river near the old harbour.")
    index = tmp_path / "idx"
    _index([corpus], index, tiny_embedder_dir)
    bundle = IndexBundle.open(index)
    pages = {chunk.metadata.get("page"): chunk for _, chunk in bundle.docstore.iter_rows() if "page" in chunk.metadata}
    bundle.close()
    assert sorted(pages) == [1, 2]
    assert pages[2].doc_id == "report.pdf#p2" and pages[2].title == "Helix Annual Report"
    assert "Marie Curie" in pages[2].text and "Marie Curie" not in pages[1].text

    hits = _search(index, "Who founded the river institute?", capsys, "--mode", "bm25", "-k", "1")
    assert hits[0]["chunk"]["metadata"]["page"] == 2

    use_keyword_evaluator(monkeypatch)
    capsys.readouterr()
    assert main(["ask", "Who founded the river institute?", "--index", str(index), "--no-web", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert not result["abstained"], result["answer"]
    cited = [c for c in result["citations"] if c["doc_id"] == "report.pdf#p2"]
    assert cited and cited[0]["page"] == 2
    assert all(c["page"] is None for c in result["citations"] if c["doc_id"] == "notes.txt")
    assert main(["ask", "Who founded the river institute?", "--index", str(index), "--no-web"]) == 0
    assert "(report.pdf#p2#0, page 2)" in capsys.readouterr().out  # the text output names the page too


def test_broken_and_encrypted_pdf_and_docx_are_skipped_with_a_reason(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt("secret")
    writer.write(str(tmp_path / "locked.pdf"))
    write_file(tmp_path / "broken.pdf", b"%PDF-1.4\nthis is not a PDF body")
    write_file(tmp_path / "broken.docx", b"PK\x03\x04 not a zip")
    write_file(tmp_path / "blank.pdf", pdf_bytes([[]]))
    write_file(tmp_path / "ok.txt", "Kept.")
    result = load_documents([tmp_path])
    assert [doc.id for doc in result.documents] == ["ok.txt"]
    reasons = {Path(source).name: reason for source, reason in result.skipped}
    assert reasons["locked.pdf"] == "encrypted PDF (it needs a password)"
    assert reasons["broken.pdf"].startswith("unreadable PDF (")
    assert reasons["broken.docx"].startswith("unreadable DOCX (")
    assert reasons["blank.pdf"].startswith("no text in the PDF")


def test_a_word_file_is_read_with_its_headings_as_metadata(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "bridges.docx", "Kazan Bridges", [
        ("History", ["The Millennium Bridge opened in 2005.", "It crosses the Kazanka river."]),
        ("Design", ["Its pylon is shaped like the letter M."]),
    ])
    (doc,) = load_documents([path]).documents
    assert (doc.id, doc.title) == ("bridges.docx", "Kazan Bridges")
    assert doc.text == ("The Millennium Bridge opened in 2005.\n\nIt crosses the Kazanka river.\n\n"
                        "Its pylon is shaped like the letter M.")
    assert [(s["heading"], doc.text[s["start"]:][:14]) for s in doc.metadata["sections"]] == [
        ("History", "The Millennium"), ("Design", "Its pylon is s")]
    assert doc.metadata["file"] == str(path)


# ---- stable ids ---------------------------------------------------------------------------------------------------


def test_reindexing_one_file_by_its_own_path_replaces_it(tmp_path: Path, tiny_embedder_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus"
    helix = write_file(corpus / "en" / "helix_robotics.md", "# Helix Robotics\nHelix builds welding arms.")
    write_file(corpus / "en" / "river.txt", "The river flows through the city.")
    write_file(corpus / "ru" / "most.txt", "Мост пересекает реку.")
    index = tmp_path / "idx"
    _index([corpus], index, tiny_embedder_dir)
    bundle = IndexBundle.open(index)
    assert bundle.manifest["counts"]["documents"] == 3
    bundle.close()

    write_file(helix, "# Helix Robotics\nHelix builds painting robots now.")
    _index([helix], index, tiny_embedder_dir)  # the file by its own path, not the folder
    bundle = IndexBundle.open(index)
    ids = sorted(bundle.docstore.document_ids())
    texts = [chunk.text for _, chunk in bundle.docstore.iter_rows() if chunk.doc_id == "en/helix_robotics.md"]
    assert bundle.manifest["counts"]["documents"] == 3, ids
    assert ids == ["en/helix_robotics.md", "en/river.txt", "ru/most.txt"]
    assert texts == ["Helix builds painting robots now."]
    bundle.close()

    # a relative path from inside the corpus, and a subfolder, name the same documents too
    write_file(corpus / "ru" / "most.txt", "Мост пересекает реку у гавани.")
    monkeypatch.chdir(corpus / "ru")
    _index([Path("most.txt"), corpus / "en"], index, tiny_embedder_dir)
    bundle = IndexBundle.open(index)
    assert sorted(bundle.docstore.document_ids()) == ids
    assert [c.text for _, c in bundle.docstore.iter_rows() if c.doc_id == "ru/most.txt"] == [
        "Мост пересекает реку у гавани."]
    bundle.close()


def test_a_file_outside_every_root_keeps_its_name_as_id(tmp_path: Path) -> None:
    inside = write_file(tmp_path / "corpus" / "a" / "x.txt", "Inside.")
    outside = write_file(tmp_path / "elsewhere" / "y.txt", "Outside.")
    first = load_documents([tmp_path / "corpus"])
    assert [doc.id for doc in first.documents] == ["a/x.txt"]
    again = load_documents([inside, outside], roots=first.roots)
    assert [doc.id for doc in again.documents] == ["a/x.txt", "y.txt"]
    assert again.roots == [*first.roots, str((tmp_path / "elsewhere").resolve())]


def test_a_pdf_that_lost_a_page_loses_it_in_the_index_and_deletes_by_file_name(
        tmp_path: Path, tiny_embedder_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "docs"
    report = write_file(corpus / "report.pdf", pdf_bytes([["The river flows."], ["The bridge is old."],
                                                         ["The city is large."]]))
    write_file(corpus / "notes.txt", "Notes about the harbour.")
    index = tmp_path / "idx"
    _index([corpus], index, tiny_embedder_dir)
    write_file(report, pdf_bytes([["The river flows."], ["The bridge is new."]]))
    _index([report], index, tiny_embedder_dir)
    bundle = IndexBundle.open(index)
    assert sorted(bundle.docstore.document_ids()) == ["notes.txt", "report.pdf#p1", "report.pdf#p2"]
    bundle.close()
    capsys.readouterr()
    assert main(["index", "--index", str(index), "--delete", "report.pdf", "--quiet"]) == 0
    assert "skipped" not in capsys.readouterr().err
    bundle = IndexBundle.open(index)
    assert sorted(bundle.docstore.document_ids()) == ["notes.txt"]
    bundle.close()
