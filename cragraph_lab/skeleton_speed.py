"""NER time over an index's chunks, all of them against skeleton indexing, side by side in one process.

    python -m cragraph_lab bench skeleton-speed INDEX [--share 0.25] [--repeats 3]
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from stores.bundle import IndexBundle
from stores.ner import chunk_entities
from stores.skeleton import skeleton_entities


def measure(index: Path, share: float = 0.25, repeats: int = 3) -> dict[str, Any]:
    """Median seconds of NER over every chunk and of skeleton_entities at `share`, taking turns per repeat."""
    bundle = IndexBundle.open(index)
    rows, chunks = map(list, zip(*bundle.docstore.iter_rows(), strict=True))
    vectors = bundle.dense.vectors_for(rows)
    chunk_entities(chunks[:64])  # the NER models load before timing
    seconds: dict[str, list[float]] = {"all": [], "skeleton": []}
    for _ in range(repeats):
        started = time.perf_counter()
        chunk_entities(chunks)
        seconds["all"].append(time.perf_counter() - started)
        started = time.perf_counter()
        skeleton_entities(chunks, vectors, share)
        seconds["skeleton"].append(time.perf_counter() - started)
    return {"chunks": len(chunks), "share": share, "repeats": repeats,
            **{f"{name}_s": statistics.median(values) for name, values in seconds.items()}}


def summary(result: dict[str, Any]) -> str:
    return (f"NER over all {result['chunks']} chunks: {result['all_s']:.1f} s; skeleton at {result['share']:g}: "
            f"{result['skeleton_s']:.1f} s ({result['all_s'] / result['skeleton_s']:.2f}x faster; medians of "
            f"{result['repeats']})")
