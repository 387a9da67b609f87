"""`python -m cragraph_lab eval retrieval`: R@k, AllGold@5, MRR and latency per retrieval mode on a normalized dataset.

The dataset's corpus is indexed through the product path (loaders, chunking, bundle); the index is reused when
the corpus has not changed. Chunk hits map to document ids at the rank of each document's best chunk.
`backends` compares index backends in one run: every mode runs on each (named `mode@milvus`), interleaved per
question, over the same corpus, chunks and cached embeddings.
"""

from __future__ import annotations

import json
import platform
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from tqdm.auto import tqdm

from cragraph.evaluation.metrics import all_gold_at, ndcg_at, percentile, recall_at, reciprocal_rank, unique_in_order
from cragraph_lab.datasets import Dataset, load_dataset
from cragraph_lab.multihop import multihop_runner
from cragraph_lab.router import router_runner
from models.paths import cache_root
from rag.planning.settings import MultihopSettings
from rag.retrieval.graph_walk import graph_rerank
from rag.retrieval.retriever import FUSIONS, MODES, Fusion, HybridRetriever, Mode, RetrievalSettings
from stores.backend import Index
from stores.bundle import BundleError, IndexBundle, IndexSettings
from stores.milvus.index import MilvusIndex
from stores.text import language_of

COLUMNS = ("R@1", "R@2", "R@5", "R@10", "AllGold@5", "MRR", "nDCG@10", "p50_ms", "p95_ms")
CHUNKS_PER_QUERY = 50  # enough chunks to fill 10 distinct documents when documents were split

# A mode runs a question and returns document ids, best first.
ModeRunner = Callable[[str], list[str]]


@dataclass
class ModeResult:
    mode: str
    metrics: dict[str, float] = field(default_factory=dict)
    per_question: list[dict] = field(default_factory=list)


def dataset_index(dataset: Dataset, embedder: str, index_root: Path | None = None,
                  progress: bool = True) -> IndexBundle:
    """Build the dataset's index once per embedder; later runs reuse it (a no-op add when nothing changed)."""
    root = index_root or cache_root() / "bench-indexes"
    path = root / f"{dataset.name.replace('/', '__')}--{embedder.replace('/', '__')}"
    try:
        bundle = IndexBundle.open(path, embedder=embedder)
    except BundleError:
        bundle, report = IndexBundle.build(path, [dataset.corpus_file], IndexSettings(embedder=embedder),
                                           progress=progress)
        print(f"indexed {dataset.name}: {report.summary()}")
        return bundle
    bundle.add([dataset.corpus_file], progress=progress)
    return bundle


BACKENDS = {"bundle": None, "milvus": "cragraph", "milvus-analyzer": "milvus"}
"""Backends `python -m cragraph_lab eval retrieval --backend` compares: the bundle, and Milvus with what its BM25
function reads (our tokenizer's terms, or Milvus' standard analyzer over the raw text)."""


def milvus_dataset_index(dataset: Dataset, embedder: str, index_root: Path | None = None, uri: str | None = None,
                         bm25_terms: str = "cragraph", progress: bool = True) -> MilvusIndex:
    """The dataset's Milvus index (a Milvus Lite file under `index_root` unless `uri` names one or a server),
    built once per embedder and BM25 terms; later runs reuse it."""
    root = index_root or cache_root() / "bench-indexes"
    stem = f"{dataset.name.replace('/', '__')}--{embedder.replace('/', '__')}"
    if uri is None:
        root.mkdir(parents=True, exist_ok=True)
        uri = str(root / f"{stem}--milvus.db")
    collection = re.sub(r"\W", "_", f"bench_{stem}_{bm25_terms}").strip("_")[:200]
    try:
        index = MilvusIndex.open(uri, embedder=embedder, collection=collection)
    except BundleError as error:
        if "no index at" not in str(error):
            raise
        index, report = MilvusIndex.build(uri, [dataset.corpus_file], IndexSettings(embedder=embedder),
                                          progress=progress, collection=collection, bm25_terms=bm25_terms)
        print(f"indexed {dataset.name} in Milvus ({bm25_terms} terms): {report.summary()}")
        return index
    index.add([dataset.corpus_file], progress=progress)
    return index


def backend_index(backend: str, dataset: Dataset, embedder: str, index_root: Path | None = None,
                  uri: str | None = None, progress: bool = True) -> Index:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    terms = BACKENDS[backend]
    if terms is None:
        return dataset_index(dataset, embedder, index_root, progress)
    return milvus_dataset_index(dataset, embedder, index_root, uri, terms, progress)


def retriever_modes(retriever: HybridRetriever, modes: Sequence[str]) -> dict[str, ModeRunner]:
    """bm25, dense, hybrid (default fusion), hybrid-<fusion> (rrf, score, dynamic) to compare fusions,
    multihop: the documents of the evidence the planning subgraph hands to selection, best first (its GRAPH_EXPAND
    step included; multihop-nograph: without it), or graph: the hybrid list re-ranked by the walk over the
    entity-passage graph, or router: the router's choice per question, escalation included (cragraph_lab.router)."""
    def runner(mode: str) -> ModeRunner:
        if mode in ("multihop", "multihop-nograph"):
            return multihop_runner(retriever.bundle, retriever.settings,
                                   MultihopSettings(graph_expand=mode == "multihop"))
        if mode == "graph":
            return graph_runner(retriever)
        if mode == "router":
            return router_runner(retriever)
        base, _, fusion = mode.partition("-")
        if base not in MODES or (fusion and (base != "hybrid" or fusion not in FUSIONS)):
            raise ValueError(f"unknown mode {mode!r}; expected bm25, dense, hybrid, hybrid-<{'|'.join(FUSIONS)}>, "
                             "multihop, multihop-nograph, graph or router")
        search = HybridRetriever(retriever.bundle, replace(retriever.settings, fusion=cast(Fusion, fusion))) \
            if fusion else retriever
        searched = cast(Mode, base)  # both checked against MODES and FUSIONS above

        def run(question: str) -> list[str]:
            hits = search.search(question, k=CHUNKS_PER_QUERY, mode=searched)
            return unique_in_order([h.chunk.doc_id for h in hits])
        return run
    return {mode: runner(mode) for mode in modes}


def graph_runner(retriever: HybridRetriever) -> ModeRunner:
    def run(question: str) -> list[str]:
        hits = retriever.search(question, k=CHUNKS_PER_QUERY)
        walked = graph_rerank(retriever, question, language_of(question), hits, k=CHUNKS_PER_QUERY)
        return unique_in_order([h.chunk.doc_id for h in walked.hits])
    return run


def evaluate_modes(dataset: Dataset, runners: dict[str, ModeRunner], progress: bool = True) -> list[ModeResult]:
    """Run every mode over every question, interleaved per question so machine noise hits all modes alike."""
    results = {mode: ModeResult(mode) for mode in runners}
    latencies: dict[str, list[float]] = {mode: [] for mode in runners}
    for question in tqdm(dataset.questions, desc=f"eval {dataset.name}", unit="q", disable=not progress):
        for mode, run in runners.items():
            started = time.perf_counter()
            ranked = run(question.question)
            latencies[mode].append((time.perf_counter() - started) * 1000)
            gold = question.supporting_ids
            results[mode].per_question.append({
                "id": question.id, "ranked": ranked[:10],
                "R@1": recall_at(ranked, gold, 1), "R@2": recall_at(ranked, gold, 2),
                "R@5": recall_at(ranked, gold, 5), "R@10": recall_at(ranked, gold, 10),
                "AllGold@5": all_gold_at(ranked, gold, 5), "MRR": reciprocal_rank(ranked, gold, 10),
                "nDCG@10": ndcg_at(ranked, gold, 10),
            })
    for mode, result in results.items():
        rows = result.per_question
        result.metrics = {name: sum(r[name] for r in rows) / max(len(rows), 1) for name in COLUMNS[:7]}
        result.metrics["p50_ms"] = percentile(latencies[mode], 50)
        result.metrics["p95_ms"] = percentile(latencies[mode], 95)
    return list(results.values())


def markdown_table(results: Sequence[ModeResult]) -> str:
    lines = ["| mode | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for result in results:
        cells = [f"{result.metrics[c]:.1f}" if c.endswith("_ms") else f"{result.metrics[c]:.3f}" for c in COLUMNS]
        lines.append(f"| {result.mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_retrieval_eval(dataset_dir: str | Path, modes: Sequence[str], embedder: str = "e5-small",
                       limit: int | None = None, out: Path | None = None, index_root: Path | None = None,
                       settings: RetrievalSettings | None = None, progress: bool = True,
                       backends: Sequence[str] = ("bundle",), uri: str | None = None) -> list[ModeResult]:
    dataset = load_dataset(dataset_dir, limit=limit)
    indexes = {backend: backend_index(backend, dataset, embedder, index_root, uri, progress) for backend in backends}
    runners: dict[str, ModeRunner] = {}
    retriever = None
    for backend, index in indexes.items():
        retriever = HybridRetriever(index, settings)
        index.embedder.embed_queries(["warm-up"])  # load the model before timing
        suffix = "" if backend == "bundle" else f"@{backend}"
        runners.update({mode + suffix: run for mode, run in retriever_modes(retriever, modes).items()})
    assert retriever is not None, "no backend given"
    results = evaluate_modes(dataset, runners, progress)
    for backend, index in indexes.items():
        print(f"\n{dataset.name} ({backend}): {len(dataset.questions)} questions, "
              f"{index.manifest['counts']['chunks']} chunks, embedder {index.settings.embedder}")
    print()
    print(markdown_table(results))
    if out is not None:
        write_report(out, dataset, results, indexes, retriever.settings)
        print(f"\nwrote {out}")
    return results


def write_report(out: Path, dataset: Dataset, results: Sequence[ModeResult], index: Index | dict[str, Index],
                 settings: RetrievalSettings) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    indexes = index if isinstance(index, dict) else {"bundle": index}
    described = {backend: {"path": str(one.path), **one.manifest["counts"], "embedder": one.settings.embedder}
                 for backend, one in indexes.items()}
    report = {
        "dataset": dataset.name,
        "questions": len(dataset.questions),
        "index": described["bundle"] if list(described) == ["bundle"] else described,
        "retrieval_settings": settings.__dict__,
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "processor": platform.processor()},
        "modes": {r.mode: {"metrics": r.metrics, "per_question": r.per_question} for r in results},
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
