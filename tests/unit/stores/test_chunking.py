"""Semantic chunking rules, checked with a deterministic topic embedder defined here (tests only)."""

from __future__ import annotations

import hashlib
import random
import re
import time

import numpy as np
import pytest

from stores.chunking import chunk_document, chunk_documents
from stores.types import Chunk, Document

TOPICS = {"river": 0, "река": 0, "河": 0, "bridge": 1, "мост": 1, "桥": 1, "music": 2, "музыка": 2, "音乐": 2}
DIMENSIONS = 16


def topic_embed(sentences: list[str]) -> np.ndarray:
    """One axis per topic word found; text with no topic word gets a hashed axis of its own."""
    vectors = np.zeros((len(sentences), DIMENSIONS), dtype=np.float32)
    for row, sentence in enumerate(sentences):
        lowered = sentence.lower()
        for word, axis in TOPICS.items():
            if word in lowered:
                vectors[row, axis] = 1.0
        if not vectors[row].any():
            vectors[row, 3 + int(hashlib.md5(sentence.encode()).hexdigest(), 16) % (DIMENSIONS - 3)] = 1.0
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class CountingEmbed:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, sentences: list[str]) -> np.ndarray:
        self.calls.append(len(sentences))
        return topic_embed(sentences)


def never_embed(sentences: list[str]) -> np.ndarray:
    raise AssertionError("embed must not be called for a passage-sized document")


def _non_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _assert_exact_cover(doc: Document, chunks: list[Chunk]) -> None:
    previous_end = 0
    for position, chunk in enumerate(chunks):
        start, end = chunk.metadata["start"], chunk.metadata["end"]
        assert doc.text[start:end] == chunk.text
        assert chunk.metadata["position"] == position
        assert chunk.id == f"{doc.id}#{position}"
        assert start >= previous_end
        assert doc.text[previous_end:start].strip() == ""
        previous_end = end
    assert doc.text[previous_end:].strip() == ""
    assert _non_space("".join(chunk.text for chunk in chunks)) == _non_space(doc.text)


def _two_topic_document() -> Document:
    river = [f"The river bends near village number {i} and floods the meadows in spring." for i in range(10)]
    bridge = [f"The bridge at crossing {i} was rebuilt in stone with three wide arches." for i in range(10)]
    return Document(id="doc", text=" ".join(river + bridge), title="Rivers and bridges",
                    metadata={"source": "x.txt", "category": "geo"})


def test_short_document_is_one_chunk_without_embedding() -> None:
    doc = Document(id="short", text="  The Volga flows into the Caspian Sea. " * 10, title="Volga",
                   metadata={"source": "volga.txt", "category": "river"})
    (chunk,) = chunk_document(doc, never_embed)
    assert chunk.id == "short#0" and chunk.doc_id == "short" and chunk.title == "Volga"
    assert chunk.text == doc.text.strip()
    assert chunk.metadata == {"source": "volga.txt", "category": "river", "language": "en", "position": 0,
                              "start": 2, "end": len(doc.text) - 1}


def test_blank_document_has_no_chunks() -> None:
    assert chunk_document(Document(id="blank", text=" \n "), never_embed) == []


def test_long_document_splits_at_the_topic_change() -> None:
    doc = _two_topic_document()
    chunks = chunk_document(doc, topic_embed, max_chars=600)
    _assert_exact_cover(doc, chunks)
    assert len(chunks) >= 2
    for chunk in chunks:
        assert ("river" in chunk.text) != ("bridge" in chunk.text), "a chunk mixes the two topics"
        assert len(chunk.text) <= 600
        assert chunk.title == doc.title
        assert chunk.metadata["language"] == "en"
        assert chunk.metadata["source"] == "x.txt" and chunk.metadata["category"] == "geo"


def test_merge_threshold_controls_merging() -> None:
    doc = _two_topic_document()
    merged = chunk_document(doc, topic_embed, min_chars=0, max_chars=2000, merge_threshold=0.5)
    unmerged = chunk_document(doc, topic_embed, min_chars=0, max_chars=2000, merge_threshold=1.01)
    assert len(merged) == 2
    assert len(unmerged) == 20


def test_chunks_respect_max_chars() -> None:
    doc = _two_topic_document()
    for max_chars in (100, 250, 400):
        chunks = chunk_document(doc, topic_embed, min_chars=0, max_chars=max_chars)
        _assert_exact_cover(doc, chunks)
        assert all(len(chunk.text) <= max_chars for chunk in chunks)


@pytest.mark.parametrize("short_topic", ["bridge", "river"])
def test_short_chunk_joins_its_more_similar_neighbour(short_topic: str) -> None:
    river = "The river bends near the old town and floods the meadows every spring."
    bridge = "The bridge at the crossing was rebuilt in stone with three wide arches."
    short = f"Music on the {short_topic}."  # half music: too far from both neighbours to merge at 0.9
    doc = Document(id="d", text=" ".join([river] * 4 + [short] + [bridge] * 4))
    alone = chunk_document(doc, topic_embed, min_chars=0, max_chars=400, merge_threshold=0.9, whole_doc_chars=0)
    assert [chunk.text for chunk in alone][1] == short
    chunks = chunk_document(doc, topic_embed, min_chars=50, max_chars=400, merge_threshold=0.9,
                            whole_doc_chars=0)
    _assert_exact_cover(doc, chunks)
    assert len(chunks) == 2
    holder = next(chunk for chunk in chunks if short in chunk.text)
    other_topic = "river" if short_topic == "bridge" else "bridge"
    assert holder.text.count(short_topic) == 5 and other_topic not in holder.text


def test_over_long_sentence_is_split_at_word_boundaries() -> None:
    words = [f"river{i}" for i in range(400)]
    doc = Document(id="long", text=" ".join(words) + ".")
    chunks = chunk_document(doc, topic_embed, min_chars=0, max_chars=200, merge_threshold=2.0)
    _assert_exact_cover(doc, chunks)
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.text) <= 200
        assert chunk.text.split()[0] in words and chunk.text.rstrip(".").split()[-1] in words


def test_long_chinese_text_uses_character_windows() -> None:
    clause = "长江是中国最长的河流流经许多城市和省份"
    text = "。".join([clause * 30] * 3) + "。" + "这座桥很有名。" * 40
    doc = Document(id="zh", text=text, title="长江")
    chunks = chunk_document(doc, topic_embed)
    _assert_exact_cover(doc, chunks)
    assert all(chunk.metadata["language"] == "zh" for chunk in chunks)
    assert max(len(chunk.text) for chunk in chunks) <= 500 + 120
    assert len(chunks) >= len(text) // 620


def test_language_can_be_given() -> None:
    doc = _two_topic_document()
    chunks = chunk_document(doc, topic_embed, language="ru-RU")
    assert {chunk.metadata["language"] for chunk in chunks} == {"ru"}


def test_wrong_embedding_count_is_an_error() -> None:
    with pytest.raises(ValueError, match="embed returned"):
        chunk_document(_two_topic_document(), lambda sentences: np.ones((1, 4)))


def test_invalid_settings_are_rejected() -> None:
    with pytest.raises(ValueError):
        chunk_document(_two_topic_document(), topic_embed, min_chars=600, max_chars=500)


@pytest.mark.parametrize("seed", range(6))
def test_no_text_is_ever_lost(seed: int) -> None:
    rng = random.Random(seed)
    vocabulary = ["river", "bridge", "music", "мост", "река", "桥", "河流", "音乐", "city.", "Dr.", "?", "!", "。",
                  "\n", "\n\n", "# Heading", "- item", "x" * 700, "长" * 700, "3.14", "e.g.", "word"]
    for _ in range(5):
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(50, 600)))
        doc = Document(id=f"r{seed}", text=text)
        for settings in ({}, {"min_chars": 0, "max_chars": 80, "whole_doc_chars": 0},
                         {"min_chars": 200, "max_chars": 300, "merge_threshold": -1.0}):
            chunks = chunk_document(doc, topic_embed, **settings)
            _assert_exact_cover(doc, chunks)
            max_chars = settings.get("max_chars", 500)
            min_chars = settings.get("min_chars", 120)
            if len(doc.text.strip()) > settings.get("whole_doc_chars", 1200):
                assert all(len(chunk.text) <= max_chars + min_chars for chunk in chunks)


def test_chunk_documents_batches_embedding_and_matches_single_documents() -> None:
    docs = [Document(id=f"d{i}", text=_two_topic_document().text, title=str(i)) for i in range(6)]
    docs.insert(2, Document(id="short", text="A short passage about a bridge."))
    counting = CountingEmbed()
    chunks = chunk_documents(docs, counting, progress=False, embed_batch=40, max_chars=600)
    assert len(counting.calls) < 6, "sentences of several documents should share an embed call"
    expected = [chunk for doc in docs for chunk in chunk_document(doc, topic_embed, max_chars=600)]
    assert [chunk.to_dict() for chunk in chunks] == [chunk.to_dict() for chunk in expected]


def test_chunk_documents_shows_a_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    docs = [_two_topic_document(), Document(id="s", text="Short.")]
    chunk_documents(docs, topic_embed, progress=True)
    shown = capsys.readouterr().err
    assert "2/2 documents" in shown and "char/s" in shown and "100%" in shown
    chunk_documents(docs, topic_embed, progress=False)
    assert capsys.readouterr().err == ""


class SlowEmbed(CountingEmbed):
    """As slow per call as tqdm's redraw interval (0.1 s), so every update of the bar is drawn."""

    def __call__(self, sentences: list[str]) -> np.ndarray:
        time.sleep(0.12)
        return super().__call__(sentences)


def test_one_long_document_moves_the_bar(capsys: pytest.CaptureFixture[str]) -> None:
    """The bar counts characters as their sentences are embedded: a single long document does not sit at 0/1."""
    doc = Document(id="long", text=" ".join(f"The river {i} flows past the bridge number {i}." for i in range(400)))
    counting = SlowEmbed()
    chunk_documents([doc], counting, progress=True, embed_batch=50)
    shown = capsys.readouterr().err
    assert len(counting.calls) == 8 and max(counting.calls) == 50
    percents = {int(p) for p in re.findall(r"(\d+)%\|", shown)}
    assert len(percents - {0, 100}) >= 3, shown



def test_a_chunk_that_starts_inside_a_table_keeps_the_tables_header_row() -> None:
    header = "| Station | River | Opened | Keeper |"
    rows = "\n".join(f"| Station {n} | River {n} | {1900 + n} | Keeper number {n} of the river watch |"
                     for n in range(1, 16))
    text = f"Gauging stations on the rivers:\n\n{header}\n|---|---|---|---|\n{rows}\n\nThe river watch ends here."
    chunks = chunk_document(Document(id="d", text=text, title="Stations"), topic_embed, max_chars=300,
                            whole_doc_chars=200, min_chars=50)
    inside = [c for c in chunks if c.text.startswith("| Station ") and not c.text.startswith(header)]
    assert inside and all(c.metadata["table_header"] == header for c in inside)
    assert all("table_header" not in c.metadata for c in chunks if c not in inside)
