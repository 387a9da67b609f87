"""The scale benchmark at a tiny size: a real bundle is built, opened (checksums verified) and searched."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cragraph_lab import scale
from cragraph_lab.cli.main import main

pytestmark = pytest.mark.skipif(not scale.QUESTIONS.exists() or not any(scale.DATA.glob("*/corpus.jsonl")),
                                reason="needs ../shared/data")


def test_synthetic_chunks_are_deterministic_and_chunk_sized() -> None:
    sentences, titles = scale.load_sentences()
    first = [c.text for c in scale.synthetic_chunks(50, sentences, titles, seed=3)]
    again = [c.text for c in scale.synthetic_chunks(50, sentences, titles, seed=3)]
    assert first == again
    assert all(0 < len(text) <= scale.CHUNK_MAX for text in first)
    assert np.median([len(text) for text in first]) >= 200
    vectors = scale.unit_vectors(10, seed=0)
    assert vectors.shape == (10, scale.DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_tiny_run_reports_every_field(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    assert main(["bench", "scale", "--sizes", "500", "--queries", "20", "--in-process", "--quiet", "--out",
                 str(out), "--workdir", str(tmp_path / "work")]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert result["chunks"] == 500 and result["dense_index"] == "flat"
    assert {"docstore", "bm25", "faiss", "save", "total"} <= result["seconds"].keys()
    assert all(seconds >= 0 for seconds in result["seconds"].values())
    assert {"docstore.sqlite", "bm25/bm25_counts.npz", "bm25/bm25.json", "vectors.npy", "dense.faiss",
            "manifest.json"} <= result["disk_bytes"].keys()
    assert all(size > 0 for size in result["disk_bytes"].values())
    assert result["disk_total_bytes"] == sum(result["disk_bytes"].values())
    assert result["disk_bytes"]["vectors.npy"] >= 500 * scale.DIM * 4
    assert result["rss_mb"]["peak_build"] > 0 and result["rss_mb"]["after_load"] > 0
    query = result["query"]
    assert query["queries"] == 20
    for mode in ("hybrid", "bm25", "dense", "hybrid_faiss1", "dense_faiss1"):
        latency = query["latency_ms"][mode]
        assert 0 < latency["p50"] <= latency["p95"] <= latency["max"]
    assert not (tmp_path / "work" / "bundle-500").exists()  # removed unless --keep
    assert "| 500 | flat |" in scale.markdown(report)


def test_tiny_milvus_lite_run_reports_build_disk_memory_and_latency(tmp_path: Path) -> None:
    out = tmp_path / "scale-milvus.json"
    assert main(["bench", "scale", "--sizes", "300", "--queries", "10", "--backend", "milvus", "--in-process",
                 "--quiet", "--out", str(out), "--workdir", str(tmp_path / "work")]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert report["backend"] == result["backend"] == "milvus-lite" and result["chunks"] == 300
    assert {"create", "insert", "flush", "manifest", "total"} <= result["seconds"].keys()
    assert result["disk_total_bytes"] > 300 * scale.DIM * 4  # the vectors at least
    for mode in ("hybrid", "bm25", "dense"):
        latency = result["query"]["latency_ms"][mode]
        assert 0 < latency["p50"] <= latency["p95"] <= latency["max"]
    assert not (tmp_path / "work" / "milvus-300.db").exists()
