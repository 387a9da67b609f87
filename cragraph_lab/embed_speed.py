"""Indexing speed of the packaged e5-small per embedding backend, side by side in one process.

    python -m cragraph_lab bench embed-speed [--dataset DIR] [--chunks 600] [--repeats 5] [--threads N]

Real passages of a dataset's corpus.jsonl (hotpotqa_migres200 by default) are embedded as index chunks
(`embed_passages`, the passage prefix, one call per repeat as an index build makes it) by sentence-transformers
fp32 (torch, the reference), ONNX Runtime fp32 and int8, and OpenVINO on the fp32 graph. The backends take turns
within each repeat (the order rotates), so load from other processes hits them alike; the table gives the median
chunks/s and the median of the per-repeat ratios to torch, and the cosine of every backend's vectors to the
reference.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_DATASET = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "hotpotqa_migres200"
BACKENDS = ("torch", "onnx", "onnx-int8", "openvino")


def read_passages(dataset: Path, limit: int) -> list[str]:
    """The first `limit` non-empty texts of the dataset's corpus.jsonl (title and text, as the index chunks them)."""
    corpus = dataset / "corpus.jsonl" if dataset.is_dir() else dataset
    passages: list[str] = []
    with open(corpus, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            text = str(row.get("text", "")).strip()
            if text:
                passages.append(text)
            if len(passages) >= limit:
                break
    if not passages:
        raise ValueError(f"no passages in {corpus}")
    return passages


def measure(passages: Sequence[str], backends: Sequence[str] = BACKENDS, repeats: int = 5,
            batch_size: int = 32) -> dict[str, Any]:
    """chunks/s per backend (interleaved repeats), paired ratios to the first backend, cosine to its vectors."""
    from models.embedder import load_embedder

    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    embedders = {b: load_embedder("e5-small", backend=b) for b in backends}
    for embedder in embedders.values():
        embedder.embed_passages(passages[:16], batch_size=batch_size)  # warm-up: sessions, allocators
    reference = backends[0]
    speeds: dict[str, list[float]] = {b: [] for b in backends}
    vectors: dict[str, np.ndarray] = {}
    for rep in range(repeats):
        order = list(backends[rep % len(backends):]) + list(backends[:rep % len(backends)])
        for backend in order:
            start = time.perf_counter()
            vectors[backend] = embedders[backend].embed_passages(passages, batch_size=batch_size)
            speeds[backend].append(len(passages) / (time.perf_counter() - start))
    rows = {}
    for backend in backends:
        cosines = (vectors[backend] * vectors[reference]).sum(axis=1)
        ratios = [s / r for s, r in zip(speeds[backend], speeds[reference], strict=True)]
        rows[backend] = {
            "chunks_per_s": statistics.median(speeds[backend]),
            "ratio": statistics.median(ratios),
            "runs": [round(s, 2) for s in speeds[backend]],
            "cosine_min": float(cosines.min()),
            "cosine_mean": float(cosines.mean()),
            "providers": getattr(embedders[backend].runner, "providers", ["torch"]),
        }
    return {"chunks": len(passages), "repeats": repeats, "batch_size": batch_size, "reference": reference,
            "threads": os.environ.get("CRAGRAPH_EMBED_THREADS", ""), "backends": rows}


def format_table(result: dict[str, Any]) -> str:
    lines = [f"{result['chunks']} chunks, batch {result['batch_size']}, median of {result['repeats']} interleaved "
             f"repeats; ratio = median per-repeat chunks/s over {result['reference']}",
             "| backend | chunks/s | vs torch fp32 | cosine to torch (min / mean) |", "|---|---|---|---|"]
    for backend, row in result["backends"].items():
        lines.append(f"| {backend} | {row['chunks_per_s']:.1f} | {row['ratio']:.2f}x | "
                     f"{row['cosine_min']:.5f} / {row['cosine_mean']:.5f} |")
    return "\n".join(lines)
