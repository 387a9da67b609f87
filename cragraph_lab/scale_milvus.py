"""The Milvus Lite column of the scale curve: the same synthetic chunks, random vectors and questions as
cragraph_lab.scale, stored in a Milvus Lite file through the backend's own schema and searched through
`MilvusIndex` with the shared HybridRetriever (dynamic score fusion, pool 100, k 10).

Build is the collection's creation and the inserts (Milvus computes each chunk's BM25 vector from its terms and
indexes the rows itself); disk is the Milvus Lite folder; the manifest is written as `MilvusIndex` writes it.
Each size is built in one child process and queried in another, as for the bundle:

    python -m cragraph_lab bench scale --sizes 10000 --backend milvus --out runs/scale/scale-milvus.json
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from cragraph_lab.scale import (
    DATA,
    DIM,
    EMBEDDER_NAME,
    _peak_rss_mb,
    _RandomEmbedder,
    _rss_mb,
    _timed,
    load_sentences,
    measure_phases,
    question_embedder,
    search_latency,
    synthetic_chunks,
    unit_vectors,
)
from rag.retrieval.retriever import HybridRetriever
from stores.bundle import IndexSettings
from stores.milvus.connection import connect
from stores.milvus.index import MilvusIndex
from stores.milvus.schema import DEFAULT_COLLECTION, FORMAT, FORMAT_VERSION, chunk_record, create_collections
from stores.milvus.schema import write_manifest as store_manifest

INSERT_BATCH = 1_000


class _SyntheticMilvus(MilvusIndex):
    """An opened Milvus index whose query embedder is `_RandomEmbedder` (the real one would load e5)."""

    stub: _RandomEmbedder

    @property
    def embedder(self) -> Any:
        return self.stub


def build(path: Path, n: int, seed: int = 0, progress: bool = True, data: Path = DATA) -> dict[str, Any]:
    """Build a synthetic Milvus Lite index of `n` chunks at `path` (a FILE.db); seconds per step, disk, RSS."""
    baseline = _rss_mb()
    timings: dict[str, float] = {}
    sentences, titles = _timed(timings, "load_text", lambda: load_sentences(data))
    chunks = _timed(timings, "make_chunks", lambda: list(synthetic_chunks(n, sentences, titles, seed)))
    vectors = _timed(timings, "make_vectors", lambda: unit_vectors(n, seed))
    settings = IndexSettings(embedder=EMBEDDER_NAME, entities=False)
    started = time.perf_counter()
    client = connect(str(path))
    _timed(timings, "create", lambda: create_collections(client, DEFAULT_COLLECTION, DIM, settings.bm25_k1,
                                                         settings.bm25_b))

    def insert() -> None:
        for start in tqdm(range(0, n, INSERT_BATCH), desc="milvus insert", disable=not progress, unit="batch",
                          mininterval=2.0):
            client.insert(DEFAULT_COLLECTION, [chunk_record(start + i + 1, chunk, vector, [], "cragraph")
                                               for i, (chunk, vector) in enumerate(zip(
                                                   chunks[start:start + INSERT_BATCH],
                                                   vectors[start:start + INSERT_BATCH], strict=True))])

    _timed(timings, "insert", insert)
    _timed(timings, "flush", lambda: client.flush(DEFAULT_COLLECTION))  # as MilvusIndex seals every write
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "embedder": {"name": EMBEDDER_NAME, "dim": DIM},
                "settings": asdict(settings), "milvus": {"bm25_terms": "cragraph", "tokenizer": "script-routed-1"},
                "counts": {"documents": len({c.doc_id for c in chunks}), "chunks": n}, "next_row": n + 1,
                "roots": [], "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _timed(timings, "manifest", lambda: store_manifest(client, DEFAULT_COLLECTION, manifest))
    client.close()
    timings["total"] = round(time.perf_counter() - started, 3)
    disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return {
        "chunks": n,
        "backend": "milvus-lite",
        "seconds": timings,
        "disk_total_bytes": disk,
        "text_bytes": sum(len(c.text.encode("utf-8")) for c in chunks),
        "rss_mb": {"baseline_build": round(baseline, 1), "peak_build": round(_peak_rss_mb(), 1)},
    }


def query(path: Path, n_queries: int = 200, k: int = 10, warmup: int = 5, seed: int = 0,
          progress: bool = True) -> dict[str, Any]:
    """Open the Milvus Lite index at `path` and time `n_queries` real questions: hybrid, BM25-only, dense-only."""
    baseline = _rss_mb()
    started = time.perf_counter()
    opened = MilvusIndex.open(str(path))
    open_seconds = time.perf_counter() - started
    index = _SyntheticMilvus(opened.uri, opened.collection, opened.client, opened.manifest)
    questions, index.stub = question_embedder(n_queries, seed)
    after_load = _rss_mb()
    retriever = HybridRetriever(index)
    for question in questions[:warmup]:
        retriever.search(question, k=k)
    latencies = {mode: search_latency(retriever, questions, mode, k, progress, f"milvus {mode}")
                 for mode in ("hybrid", "bm25", "dense")}
    return {
        "queries": len(questions),
        "k": k,
        "open_seconds": round(open_seconds, 3),
        "latency_ms": latencies,
        "rss_mb": {"baseline_query": round(baseline, 1), "after_load": round(after_load, 1),
                   "index_after_load": round(after_load - baseline, 1), "peak_query": round(_peak_rss_mb(), 1)},
    }


def measure(n: int, workdir: Path, n_queries: int = 200, seed: int = 0, progress: bool = True,
            isolate: bool = True, keep: bool = False) -> dict[str, Any]:
    """Build and query one size of Milvus Lite (cragraph_lab.scale.measure_phases)."""
    return measure_phases(build, query, workdir / f"milvus-{n}.db", n, n_queries, seed, progress, isolate, keep)


def run(sizes: Sequence[int], n_queries: int = 200, seed: int = 0, workdir: Path | None = None,
        progress: bool = True, isolate: bool = True, keep: bool = False,
        on_result: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Measure every size (ascending); `on_result` sees the report after each size."""
    folder = Path(tempfile.mkdtemp(prefix="cragraph-scale-milvus-", dir="/tmp")) if workdir is None else workdir
    report: dict[str, Any] = {
        "benchmark": "scale", "backend": "milvus-lite",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "settings": {"dim": DIM, "vectors": "random unit float32", "query_vectors": "random unit, precomputed",
                     "entities": False, "bm25_terms": "cragraph",
                     "retrieval": "HybridRetriever defaults (dynamic score fusion, pool 100), k 10", "seed": seed},
        "results": [],
    }
    try:
        for n in sorted(sizes):
            report["results"].append(measure(n, folder, n_queries, seed, progress, isolate, keep))
            if on_result:
                on_result(report)
    finally:
        if workdir is None and not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return report


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["| chunks | backend | build s (create / insert / flush) | total s | disk MB | peak RSS build MB"
             " | RSS after open MB | open s | hybrid p50 / p95 ms | BM25 p50 / p95 ms | dense p50 / p95 ms |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        s, q = r["seconds"], r["query"]
        lat = q["latency_ms"]
        lines.append(
            f"| {r['chunks']:,} | {r['backend']} | {s['create']:.1f} / {s['insert']:.1f} / {s['flush']:.1f}"
            f" | {s['total']:.1f}"
            f" | {r['disk_total_bytes'] / 1e6:,.1f} | {r['rss_mb']['peak_build']:,.0f}"
            f" | {r['rss_mb']['after_load']:,.0f} | {q['open_seconds']:.1f}"
            f" | {lat['hybrid']['p50']:.1f} / {lat['hybrid']['p95']:.1f}"
            f" | {lat['bm25']['p50']:.1f} / {lat['bm25']['p95']:.1f}"
            f" | {lat['dense']['p50']:.1f} / {lat['dense']['p95']:.1f} |")
    return "\n".join(lines)

