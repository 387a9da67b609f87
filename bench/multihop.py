"""The `multihop` mode of `cragraph eval retrieval`: the planning subgraph's evidence as ranked documents.

The runner invokes the compiled multi-hop subgraph (the code path the agent runs) and ranks the documents of
the evidence it hands to selection, best first: what it gathers is counted at k=5 and k=10 as one list, never
as a union of lists. `python -m bench.multihop --dataset DIR` compares it with single-step hybrid
retrieval.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from bench.metrics import unique_in_order
from bench.retrieval import ModeRunner
from stores.bundle import IndexBundle
from stores.retriever import RetrievalSettings


def multihop_context(
    bundle: IndexBundle, settings: RetrievalSettings | None = None, multihop: Any = None, **overrides: Any
) -> Any:
    """A Context searching `bundle` with exactly `settings` (so the baseline and the plan agree)."""
    from graph.context import Context
    from nodes.plan_settings import PREFIX
    from nodes.retrieve import retrieval_context_fields

    values: dict[str, Any] = {"index": str(bundle.path),
                              **retrieval_context_fields(settings or RetrievalSettings())}
    if multihop is not None:
        values.update({PREFIX + f.name: getattr(multihop, f.name) for f in fields(multihop)})
    values.update(overrides)
    return Context(**values)


def multihop_runner(
    bundle: IndexBundle,
    settings: RetrievalSettings | None = None,
    multihop: Any = None,
    **context_overrides: Any,
) -> ModeRunner:
    """question -> document ids of the multi-hop evidence, best first. `multihop` is a MultihopSettings;
    `context_overrides` are further Context fields (e.g. chat_model=...)."""
    from graph.multihop import multihop_graph

    context = multihop_context(bundle, settings, multihop, **context_overrides)

    def run(question: str) -> list[str]:
        output = multihop_graph.invoke({"question": question}, context=context)
        return unique_in_order([p["doc_id"] for p in output.get("knowledge", [])])

    return run


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from bench.datasets import load_dataset
    from bench.retrieval import dataset_index, evaluate_modes, markdown_table, retriever_modes
    from nodes.plan_settings import MultihopSettings
    from stores.retriever import HybridRetriever

    parser = argparse.ArgumentParser(description="multi-hop evidence vs single-step hybrid retrieval")
    parser.add_argument("--dataset", action="append", required=True, help="dataset folder (repeatable)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a MultihopSettings field, e.g. --set bridge_top_k=6",
    )
    parser.add_argument("--out", type=Path, default=None, help="write per-dataset metrics as JSON")
    args = parser.parse_args(argv)
    overrides = {name: json.loads(value) for name, value in (item.split("=", 1) for item in args.set)}
    multihop = MultihopSettings(**overrides)
    report = {}
    for folder in args.dataset:
        dataset = load_dataset(folder, limit=args.limit)
        bundle = dataset_index(dataset, "e5-small")
        settings = RetrievalSettings()
        runners = retriever_modes(HybridRetriever(bundle, settings), ["hybrid"])
        runners["multihop"] = multihop_runner(bundle, settings, multihop)
        bundle.embedder.embed_queries(["warm-up"])
        results = evaluate_modes(dataset, runners, progress=False)
        print(
            f"\n{dataset.name}: {len(dataset.questions)} questions; "
            f"multihop settings {overrides or 'default'}\n"
        )
        print(markdown_table(results))
        report[dataset.name] = {r.mode: r.metrics for r in results}
    if args.out:
        args.out.write_text(json.dumps({"settings": asdict(multihop), "results": report}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
