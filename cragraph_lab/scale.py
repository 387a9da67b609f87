"""The scale curve of the index bundle: build time, disk size, resident memory and hybrid query latency at
10k, 100k and 1M chunks (issue 17, part 4).

What is real and what is synthetic:

* Text is real: English sentences from ../shared/data/*/corpus.jsonl (Latin-script corpora; Chinese and Russian
  sentences are left out so BM25 sees one language), recombined with a fixed seed into 300-500-character
  passages, 4 chunks per synthetic document, each under the title of one of the source documents.
* Vectors are random unit float32 vectors of dim 384 (e5-small's). Embedding 1M passages with the fast embedder
  on this 2-core CPU would take days, and the dense side of a query only costs a FAISS search, which does not
  depend on what the vectors mean. Query vectors are random unit vectors too, computed before timing: the
  latencies below leave out the query embedder (measure it with `python -m cragraph_lab bench embed-speed`).
* Chunking, NER and embedding are bypassed; everything else is the bundle's own code: the stores (DocStore,
  BM25Index, DenseIndex, which switches from exact search to HNSW above `hnsw_threshold` = 50k chunks) are built
  in a temporary folder, written by `stores.bundle._finish` (the same save() calls and sha256 manifest as
  `IndexBundle.build`) and swapped in by `_atomic_write`, so disk sizes are those of a real bundle. Queries open
  it with `IndexBundle.open` (checksums verified) and run `HybridRetriever.search` (dynamic score fusion, pool
  100, k 10, chunk texts read back from SQLite) with the embedder replaced by the precomputed vectors.
* The entity field and the entity-passage graph are off: the field needs NER over every chunk (the expensive
  part, not measured here), and the graph's KNN is built from the vectors (exact blocks below 50k chunks).

Each size is built in one child process and queried in another, so the peak resident memory (ru_maxrss) of
each phase is its own. Prints a Markdown table and writes JSON:

    python -m cragraph_lab bench scale --sizes 10000,100000,1000000 --out runs/scale/scale.json
"""

from __future__ import annotations

import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, cast

import faiss
import numpy as np
from tqdm import tqdm

from rag.retrieval.retriever import HybridRetriever
from stores.bm25 import BM25Index
from stores.bundle import BM25_FOLDER, IndexBundle, IndexSettings, _atomic_write, _finish, _Stores, writer_lock
from stores.dense import DenseIndex
from stores.docstore import DOCSTORE_FILE, DocStore
from stores.types import Chunk

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
QUESTIONS = DATA / "hotpotqa_migres200" / "questions.jsonl"
DIM = 384
CHUNK_MIN, CHUNK_MAX = 300, 500
CHUNKS_PER_DOC = 4
EMBEDDER_NAME = "random-unit-384"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


# ---- corpus --------------------------------------------------------------------------------------------------


def load_sentences(data: Path = DATA) -> tuple[list[str], list[str]]:
    """(sentences, titles) from every Latin-script corpus.jsonl directly under `data`, in a fixed order."""
    sentences: list[str] = []
    titles: list[str] = []
    for corpus in sorted(data.glob("*/corpus.jsonl")):
        with open(corpus, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                text = str(record.get("text") or "")
                if not text or not _latin(text):
                    continue
                if record.get("title"):
                    titles.append(str(record["title"]))
                sentences += [s for s in (part.strip() for part in _SENTENCE.split(text)) if 20 <= len(s) <= 400]
    if not sentences:
        raise SystemExit(f"no sentences under {data}/*/corpus.jsonl")
    return sentences, titles or ["untitled"]


def _latin(text: str) -> bool:
    sample = text[:400]
    return sum(ch.isascii() for ch in sample) >= 0.9 * len(sample)


def synthetic_chunks(n: int, sentences: Sequence[str], titles: Sequence[str], seed: int = 0) -> Iterator[Chunk]:
    """`n` chunks of 300-500 characters, each made of randomly drawn real sentences (deterministic in `seed`)."""
    rng = random.Random(seed)
    for i in range(n):
        target = rng.randint(CHUNK_MIN, CHUNK_MAX)
        parts: list[str] = []
        length = 0
        while length < target:
            sentence = sentences[rng.randrange(len(sentences))]
            if parts and length + 1 + len(sentence) > CHUNK_MAX:
                break
            parts.append(sentence)
            length += len(sentence) + (1 if len(parts) > 1 else 0)
        doc = i // CHUNKS_PER_DOC
        yield Chunk(id=f"synthetic/{doc}#{i % CHUNKS_PER_DOC}", doc_id=f"synthetic/{doc}",
                    text=" ".join(parts)[:CHUNK_MAX], title=titles[doc % len(titles)],
                    metadata={"language": "en", "position": i % CHUNKS_PER_DOC})


def unit_vectors(n: int, seed: int, batch: int = 100_000) -> np.ndarray:
    """`n` random float32 unit vectors of dim 384 (filled in batches to keep the float64 temporaries small)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, batch):
        block = rng.standard_normal((min(batch, n - start), DIM), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:start + len(block)] = block
    return out


def load_questions(limit: int, path: Path = QUESTIONS) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        questions = [json.loads(line)["question"] for line in handle if line.strip()]
    return questions[:limit]


class _Tqdm(list):  # type: ignore[type-arg]
    """A list whose iteration shows a progress bar (BM25Index.add iterates its passages once)."""

    def __init__(self, items: list[str], desc: str, show: bool):
        super().__init__(items)
        self.desc, self.show = desc, show

    def __iter__(self) -> Iterator[str]:
        return iter(tqdm(list.__iter__(self), total=len(self), desc=self.desc, disable=not self.show,
                         unit="chunk", mininterval=2.0))


class _RandomEmbedder:
    """Stands in for the embedder when the bundle is only searched: precomputed random query vectors."""

    name = EMBEDDER_NAME
    dim = DIM

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors = vectors

    def embed_queries(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        return np.stack([self.vectors[text] for text in texts])


class _SyntheticBundle(IndexBundle):
    """An opened bundle whose query embedder is `_RandomEmbedder` (the real one would load e5)."""

    stub: _RandomEmbedder

    @property
    def embedder(self) -> Any:
        return self.stub


# ---- measuring -----------------------------------------------------------------------------------------------


def _peak_rss_mb() -> float:
    """Peak resident memory of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def _rss_mb() -> float:
    """Current resident memory of this process."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)
    except OSError:
        return _peak_rss_mb()


def _timed(timings: dict[str, float], key: str, call: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = call()
    timings[key] = round(time.perf_counter() - started, 3)
    return result


def question_embedder(n_queries: int, seed: int) -> tuple[list[str], _RandomEmbedder]:
    """Real questions and a stub embedder that gives each a precomputed random unit vector."""
    questions = [q.strip() for q in load_questions(n_queries) if q.strip()]
    rng = np.random.default_rng(seed + 1)
    vectors = rng.standard_normal((len(questions), DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return questions, _RandomEmbedder({q: v for q, v in zip(questions, vectors, strict=True)})


def search_latency(retriever: HybridRetriever, questions: Sequence[str], mode: str, k: int, progress: bool,
                   label: str | None = None) -> dict[str, float]:
    """Percentiles of one mode's search time over the questions (ms); a hybrid search with no hit is an error."""
    times = []
    for question in tqdm(questions, desc=f"{label or mode} queries", disable=not progress, unit="q",
                         mininterval=2.0):
        begun = time.perf_counter()
        hits = retriever.search(question, k=k, mode=mode)  # type: ignore[arg-type]
        times.append((time.perf_counter() - begun) * 1000)
        if mode == "hybrid" and not hits:
            raise RuntimeError(f"no hits for {question!r}")
    return _percentiles(times)


def build(path: Path, n: int, seed: int = 0, progress: bool = True, data: Path = DATA) -> dict[str, Any]:
    """Build a synthetic bundle of `n` chunks at `path`; returns seconds per step, disk bytes and peak RSS."""
    baseline = _rss_mb()
    timings: dict[str, float] = {}
    sentences, titles = _timed(timings, "load_text", lambda: load_sentences(data))
    chunks = _timed(timings, "make_chunks", lambda: list(tqdm(
        synthetic_chunks(n, sentences, titles, seed), total=n, desc=f"{n:,} chunks", disable=not progress,
        unit="chunk", mininterval=2.0)))
    vectors = _timed(timings, "make_vectors", lambda: unit_vectors(n, seed))
    settings = IndexSettings(embedder=EMBEDDER_NAME, entities=False)
    stub = _RandomEmbedder({})
    kind = ""

    def write(folder: Path) -> dict[str, Any]:
        nonlocal kind
        stores = _Stores(DocStore(folder / DOCSTORE_FILE), BM25Index(k1=settings.bm25_k1, b=settings.bm25_b),
                         DenseIndex(DIM, hnsw_threshold=settings.hnsw_threshold), None)
        rows = list(range(stores.docstore.next_row(), stores.docstore.next_row() + n))
        step = 50_000

        def docstore() -> None:
            for start in tqdm(range(0, n, step), desc="docstore", disable=not progress, unit="batch"):
                stores.docstore.add(rows[start:start + step], chunks[start:start + step])

        _timed(timings, "docstore", docstore)
        passages = _Tqdm([c.passage for c in chunks], "bm25", progress)
        _timed(timings, "bm25", lambda: stores.bm25.add(rows, passages))
        if progress:
            target = "HNSW (M 32, efConstruction 200)" if n > settings.hnsw_threshold else "an exact flat index"
            print(f"faiss: {n:,} vectors into {target} ...", file=sys.stderr, flush=True)
        _timed(timings, "faiss", lambda: stores.dense.add(rows, vectors))
        kind = stores.dense.kind
        return {**_timed(timings, "save", lambda: _finish(folder, settings, cast(Any, stub), stores)), "roots": []}

    started = time.perf_counter()
    with writer_lock(path):
        _atomic_write(path, write, start_from_existing=False)
    timings["total"] = round(time.perf_counter() - started, 3)
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    files = {name: entry["bytes"] for name, entry in manifest["files"].items()}
    files["manifest.json"] = (path / "manifest.json").stat().st_size
    return {
        "chunks": n,
        "dense_index": kind,
        "seconds": timings,
        "disk_bytes": files,
        "disk_total_bytes": sum(files.values()),
        "text_bytes": sum(len(c.text.encode("utf-8")) for c in chunks),
        "bm25_vocabulary": len(json.loads((path / BM25_FOLDER / "bm25.json").read_text(encoding="utf-8"))["terms"]),
        "rss_mb": {"baseline_build": round(baseline, 1), "peak_build": round(_peak_rss_mb(), 1)},
    }


def query(path: Path, n_queries: int = 200, k: int = 10, warmup: int = 5, seed: int = 0,
          progress: bool = True) -> dict[str, Any]:
    """Open the bundle at `path` and time `n_queries` real questions: hybrid, BM25-only and dense-only."""
    baseline = _rss_mb()
    started = time.perf_counter()
    opened = IndexBundle.open(path)
    open_seconds = time.perf_counter() - started
    bundle = _SyntheticBundle(opened.path, opened.manifest, opened.docstore, opened.bm25, opened.dense)
    questions, bundle.stub = question_embedder(n_queries, seed)
    after_load = _rss_mb()
    retriever = HybridRetriever(bundle)
    for question in questions[:warmup]:  # first searches read the index's languages and warm SQLite's cache
        retriever.search(question, k=k)
    latencies: dict[str, dict[str, float]] = {}
    threads = faiss.omp_get_max_threads()
    # As the bundle runs (FAISS with all OpenMP threads), then with FAISS on one thread: on a busy 2-core machine
    # a single-query FAISS search that waits for a second OpenMP thread costs ~30x (measured here).
    for label, mode, faiss_threads in [("hybrid", "hybrid", threads), ("bm25", "bm25", threads),
                                       ("dense", "dense", threads), ("hybrid_faiss1", "hybrid", 1),
                                       ("dense_faiss1", "dense", 1)]:
        faiss.omp_set_num_threads(faiss_threads)
        latencies[label] = search_latency(retriever, questions, mode, k, progress, label)
    faiss.omp_set_num_threads(threads)
    bundle.close()
    return {
        "queries": len(questions),
        "k": k,
        "open_seconds": round(open_seconds, 3),
        "faiss_threads": threads,
        "latency_ms": latencies,
        "rss_mb": {"baseline_query": round(baseline, 1), "after_load": round(after_load, 1),
                   "index_after_load": round(after_load - baseline, 1), "peak_query": round(_peak_rss_mb(), 1)},
    }


def _percentiles(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"p50": round(float(np.percentile(ordered, 50)), 2), "p95": round(float(np.percentile(ordered, 95)), 2),
            "mean": round(statistics.fmean(ordered), 2), "max": round(ordered[-1], 2)}


def measure(n: int, workdir: Path, n_queries: int = 200, seed: int = 0, progress: bool = True,
            isolate: bool = True, keep: bool = False) -> dict[str, Any]:
    """Build and query one size of the bundle (measure_phases)."""
    return measure_phases(build, query, workdir / f"bundle-{n}", n, n_queries, seed, progress, isolate, keep)


def measure_phases(build: Callable[..., dict[str, Any]], query: Callable[..., dict[str, Any]], path: Path, n: int,
                   n_queries: int = 200, seed: int = 0, progress: bool = True, isolate: bool = True,
                   keep: bool = False) -> dict[str, Any]:
    """Run one backend's `build` then `query` (module-level functions) for one size at `path`; `isolate` runs
    each phase in a fresh process, so each RSS peak is its own (and a server thread or file lock goes with it)."""
    try:
        if isolate:
            context = get_context("spawn")
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                built = pool.submit(build, path, n, seed, progress).result()
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                searched = pool.submit(query, path, n_queries, 10, 5, seed, progress).result()
        else:
            built = build(path, n, seed, progress)
            searched = query(path, n_queries, seed=seed, progress=progress)
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)
    return {**built, "query": searched, "rss_mb": {**built["rss_mb"], **searched["rss_mb"]}}


def run(sizes: Sequence[int], n_queries: int = 200, seed: int = 0, workdir: Path | None = None,
        progress: bool = True, isolate: bool = True, keep: bool = False,
        on_result: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Measure every size (ascending); `on_result` sees the report after each size (to save partial results)."""
    owned = workdir is None
    folder = Path(tempfile.mkdtemp(prefix="cragraph-scale-", dir="/tmp")) if workdir is None else workdir
    report: dict[str, Any] = {
        "benchmark": "scale",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "settings": {"dim": DIM, "vectors": "random unit float32", "query_vectors": "random unit, precomputed",
                     "hnsw_threshold": IndexSettings().hnsw_threshold, "entities": False,
                     "retrieval": "HybridRetriever defaults (dynamic score fusion, pool 100), k 10",
                     "text": "English sentences from ../shared/data/*/corpus.jsonl recombined into 300-500 chars",
                     "seed": seed},
        "results": [],
    }
    try:
        for n in sorted(sizes):
            result = measure(n, folder, n_queries, seed, progress, isolate, keep)
            report["results"].append(result)
            if progress:
                print(markdown(report), file=sys.stderr, flush=True)
            if on_result:
                on_result(report)
    finally:
        if owned and not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return report


# ---- reporting -----------------------------------------------------------------------------------------------


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| chunks | FAISS | build s (docstore / BM25 / FAISS / save) | total s | disk MB (sqlite / bm25 / vectors"
        " / faiss) | total MB | peak RSS build MB | RSS after open MB | open s | hybrid p50 / p95 ms"
        " | BM25 p50 / p95 ms | dense p50 / p95 ms | hybrid, FAISS 1 thread, p50 / p95 ms |",
        "|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["results"]:
        s, d, q = r["seconds"], r["disk_bytes"], r["query"]
        bm25 = sum(v for name, v in d.items() if name.startswith(f"{BM25_FOLDER}/"))
        lat = q["latency_ms"]
        lines.append(
            f"| {r['chunks']:,} | {r['dense_index']} | {s['docstore']:.1f} / {s['bm25']:.1f} / {s['faiss']:.1f}"
            f" / {s['save']:.1f} | {s['total']:.1f} | {_mb(d['docstore.sqlite'])} / {_mb(bm25)} /"
            f" {_mb(d['vectors.npy'])} / {_mb(d['dense.faiss'])} | {_mb(r['disk_total_bytes'])}"
            f" | {r['rss_mb']['peak_build']:,.0f} | {r['rss_mb']['after_load']:,.0f} | {q['open_seconds']:.1f}"
            f" | {lat['hybrid']['p50']:.1f} / {lat['hybrid']['p95']:.1f}"
            f" | {lat['bm25']['p50']:.1f} / {lat['bm25']['p95']:.1f}"
            f" | {lat['dense']['p50']:.1f} / {lat['dense']['p95']:.1f}"
            f" | {_pair(lat.get('hybrid_faiss1'))} |")
    return "\n".join(lines)


def _pair(latency: dict[str, float] | None) -> str:
    return f"{latency['p50']:.1f} / {latency['p95']:.1f}" if latency else "-"


def _mb(n_bytes: float) -> str:
    return f"{n_bytes / 1e6:,.1f}"
