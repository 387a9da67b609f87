"""Fuzzing documents for indexing (issue 14): folders mixing good documents with binary files, invalid UTF-8,
UTF-16/32 with BOM, long single lines, deep HTML, JSONL with wrong types, NaN, huge integers, deep nesting, lone
surrogates and duplicate ids, symlink loops, links out of the folder, and names with newlines or non-UTF-8 bytes.

Properties: loading never raises; every good document comes out exactly once with its text (none lost beside
the bad ones); nothing behind a link out of the folder is read; everything that comes out is valid Unicode and
strict JSON; an index built from the folder holds every good document and answers a search."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.retrieval.retriever import HybridRetriever
from stores.bundle import IndexBundle, IndexSettings
from stores.loaders import load_documents
from tests.fuzz.conftest import SCALE, examples, tally
from tests.fuzz.strategies import ANY_CHAR, JSON_LIKE

OUTSIDE_MARKER = "zqoutsidesecret"

GOOD_KINDS = st.sampled_from(["txt", "md", "html", "jsonl", "utf16", "latin1", "newline-name", "bytes-name"])
BAD_KINDS = st.sampled_from(
    [
        "binary",
        "invalid-utf8",
        "long-line",
        "deep-html",
        "bad-jsonl",
        "loop",
        "outside-link",
        "empty",
        "bom-garbage",
        "nul",
    ]
)
BAD_JSONL_LINES = st.one_of(
    JSON_LIKE.map(lambda value: json.dumps(value, allow_nan=True, ensure_ascii=True)),
    st.builds(lambda meta: json.dumps({"id": "bad-meta", "text": "t", "metadata": meta}, allow_nan=True), JSON_LIKE),
    st.sampled_from(
        [
            '{"id": "bad-nan", "text": "x", "metadata": {"s": NaN}}',
            '{"id": "bad-big", "text": "x", "metadata": {"n": ' + "7" * 4400 + "}}",
            '{"id": "bad-deep", "text": "x", "metadata": ' + "[" * 3000 + "]" * 3000 + "}",
            '{"id": ["list"], "text": "x"}',
            '{"id": "bad-text", "text": 42}',
            '{"id": "bad-title", "text": "x", "title": {}}',
            '{"text": "no id"}',
            "[1, 2]",
            "not json at all",
            '{"id": "bad-s\\ud800", "text": "\\udfff"}',
        ]
    ),
    st.text(ANY_CHAR, max_size=40).map(lambda text: text.replace("\n", " ")),
)


def _good(kind: str, index: int, folder: Path) -> tuple[str, str]:
    """Write one good document; returns (marker, expected id prefix)."""
    marker = f"zqgood{index}marker"
    text = f"Document {index} mentions {marker} near the river."
    if kind == "txt":
        (folder / f"good{index}.txt").write_text(text, encoding="utf-8")
    elif kind == "md":
        (folder / f"good{index}.md").write_text(f"# Title {index}\n\n{text}", encoding="utf-8")
    elif kind == "html":
        (folder / f"good{index}.html").write_text(f"<html><body><div><p>{text}</p></div></body></html>")
    elif kind == "jsonl":
        (folder / f"good{index}.jsonl").write_text(json.dumps({"id": f"good-{index}", "text": text}) + "\n")
    elif kind == "utf16":
        (folder / f"good{index}.txt").write_bytes(text.encode("utf-16"))
    elif kind == "latin1":
        (folder / f"good{index}.txt").write_bytes((text + " Café crème brûlée.").encode("latin-1"))
    elif kind == "newline-name":
        (folder / f"good\n{index}.txt").write_text(text, encoding="utf-8")
    else:
        with open(os.path.join(os.fsencode(folder), f"good\xff{index}".encode("latin-1") + b".txt"), "wb") as out:
            out.write(text.encode())
    return marker, text


def _bad(kind: str, index: int, folder: Path, outside: Path, data: st.DataObject) -> None:
    name = folder / f"bad{index}"
    if kind == "binary":
        name.with_suffix(".txt").write_bytes(data.draw(st.binary(max_size=300)))
    elif kind == "invalid-utf8":
        name.with_suffix(".md").write_bytes(b"ok text " + data.draw(st.binary(min_size=1, max_size=50)) + b"\xff\xfe")
    elif kind == "long-line":
        name.with_suffix(".txt").write_text("word " * (40_000 * min(SCALE, 5)), encoding="utf-8")
    elif kind == "deep-html":
        depth = data.draw(st.integers(1, 20_000))
        name.with_suffix(".html").write_text("<div><b>" * depth + "deep" + "</b></div>" * (depth // 2))
    elif kind == "bad-jsonl":
        lines = data.draw(st.lists(BAD_JSONL_LINES, min_size=1, max_size=5))
        name.with_suffix(".jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    elif kind == "loop":
        (folder / f"loop{index}").symlink_to(folder, target_is_directory=True)
    elif kind == "outside-link":
        (folder / f"outside{index}.txt").symlink_to(outside)
    elif kind == "empty":
        name.with_suffix(".txt").write_bytes(b" \n\t ")
    elif kind == "bom-garbage":
        name.with_suffix(".txt").write_bytes(b"\xff\xfe" + data.draw(st.binary(max_size=40)) + b"\x00\xd8")
    else:
        name.with_suffix(".txt").write_bytes(b"text\x00with NUL")


def _make_folder(data: st.DataObject) -> tuple[Path, dict[str, str]]:
    root = Path(tempfile.mkdtemp(prefix="fuzz-docs-"))
    folder = root / "docs"
    folder.mkdir()
    outside = root / "outside.txt"
    outside.write_text(f"Secret {OUTSIDE_MARKER} outside the folder.")
    goods = {}
    for index, kind in enumerate(data.draw(st.lists(GOOD_KINDS, min_size=1, max_size=3))):
        marker, text = _good(kind, index, folder)
        goods[marker] = text
    for index, kind in enumerate(data.draw(st.lists(BAD_KINDS, max_size=4))):
        _bad(kind, index, folder, outside, data)
    return root, goods


def _check_loaded(documents: list, goods: dict[str, str], target: str) -> None:
    texts = [doc.text for doc in documents]
    lost = [marker for marker in goods if sum(marker in text for text in texts) != 1]
    tally(target, cases=1, documents=len(goods), lost=len(lost))
    assert not lost, f"good documents lost or duplicated: {lost}"
    assert not any(OUTSIDE_MARKER in text for text in texts), "read through a link out of the folder"
    for doc in documents:
        json.dumps([doc.id, doc.title, doc.text, doc.metadata], allow_nan=False).encode("utf-8")
        (doc.id + doc.title + doc.text).encode("utf-8")


@settings(max_examples=examples(80))
@given(st.data())
def test_loading_keeps_every_good_document(data: st.DataObject) -> None:
    root, goods = _make_folder(data)
    try:
        _check_loaded(load_documents([root / "docs"]).documents, goods, "load")
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def embedder(tiny_embedder_dir: Path) -> str:
    return str(tiny_embedder_dir)


@settings(max_examples=examples(10))
@given(st.data())
def test_an_index_built_beside_bad_files_holds_every_good_document(embedder: str, data: st.DataObject) -> None:
    root, goods = _make_folder(data)
    try:
        bundle, _ = IndexBundle.build(
            root / "index", [root / "docs"], IndexSettings(embedder=embedder, entities=False), progress=False
        )
        chunks = [chunk for _, chunk in bundle.docstore.iter_rows()]
        by_doc: dict[str, str] = {}
        for chunk in chunks:
            by_doc[chunk.doc_id] = by_doc.get(chunk.doc_id, "") + " " + chunk.text
        lost = [marker for marker in goods if not any(marker in text for text in by_doc.values())]
        tally("index", cases=1, documents=len(goods), lost=len(lost))
        assert not lost, f"good documents missing from the index: {lost}"
        assert not any(OUTSIDE_MARKER in text for text in by_doc.values())
        marker = next(iter(goods))
        hits = HybridRetriever(bundle).search(marker, k=3)  # BM25 gives no hit when the only document has it
        assert hits and all(hit.chunk.doc_id in by_doc for hit in hits)
        bundle.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_5_mb_single_line_and_100k_deep_html_beside_a_good_document(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "big.txt").write_text("word " * 1_000_000, encoding="utf-8")  # 5 MB, no newline
    (folder / "deep.html").write_text("<div>" * 100_000 + "deep" + "</div>" * 100_000)
    (folder / "good.txt").write_text("zqgood0marker stays.", encoding="utf-8")
    result = load_documents([folder])
    _check_loaded(result.documents, {"zqgood0marker": ""}, "load-large")
    assert {doc.id for doc in result.documents} == {"big.txt", "deep.html", "good.txt"}
