"""NER time over an index's chunks, all of them against skeleton indexing, side by side in one process.

    python -m cragraph.bench.skeleton_speed INDEX [--share 0.25] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from stores.bundle import IndexBundle
from stores.ner import chunk_entities
from stores.skeleton import skeleton_entities


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("index")
    parser.add_argument("--share", type=float, default=0.25)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    bundle = IndexBundle.open(args.index)
    rows, chunks = map(list, zip(*bundle.docstore.iter_rows(), strict=True))
    vectors = bundle.dense.vectors_for(rows)
    chunk_entities(chunks[:64])  # the NER models load before timing
    seconds: dict[str, list[float]] = {"all chunks": [], f"skeleton {args.share:g}": []}
    for _ in range(args.repeats):
        started = time.perf_counter()
        chunk_entities(chunks)
        seconds["all chunks"].append(time.perf_counter() - started)
        started = time.perf_counter()
        skeleton_entities(chunks, vectors, args.share)
        seconds[f"skeleton {args.share:g}"].append(time.perf_counter() - started)
    for name, values in seconds.items():
        print(f"{name}: median {statistics.median(values):.1f} s over {len(chunks)} chunks")
    full, skeleton = (statistics.median(v) for v in seconds.values())
    print(f"skeleton NER is {full / skeleton:.2f}x faster")


if __name__ == "__main__":
    main()
