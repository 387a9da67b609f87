"""`python -m cragraph_lab eval retrieval --ablate ...`: each retrieval technique switched on and off, in one run.

Rows: `defaults` (the retrieve node as shipped: the question, its keyword variant, the techniques Context
switches on), `none` (every technique off), and one row per ablated technique flipped against the defaults
(`+name` where the default is off, `-name` where it is on), with the number of questions the technique actually
ran on (gated or skipped techniques run on fewer). Every row runs the same code path as the graph's
retrieve node (rag.retrieval.techniques.run_techniques) over the same index, questions interleaved so machine noise
hits all rows alike. Query2Doc / HyDE need a chat model (`chat_model`); they stay gated as in the graph.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cragraph.evaluation.metrics import unique_in_order
from cragraph_lab.datasets import load_dataset
from cragraph_lab.retrieval import (
    CHUNKS_PER_QUERY,
    ModeResult,
    ModeRunner,
    dataset_index,
    evaluate_modes,
    markdown_table,
)
from nodes.retrieve import pseudo_doc_writer
from rag.config import operator
from rag.context import Context
from rag.retrieval.multi_query import keyword_form
from rag.retrieval.retriever import HybridRetriever
from rag.retrieval.techniques import TECHNIQUES, PseudoDocWriter, Techniques, run_techniques
from stores.text import language_of

# Switching metadata boosts on when Context gives no boost specs: boost the predicted category.
_BOOST_ON: dict[str, Any] = {"category_boost": True}


def ablation_rows(defaults: Techniques, ablate: Sequence[str]) -> dict[str, Techniques]:
    """defaults, none, and each technique flipped against the defaults."""
    unknown = [name for name in ablate if name not in TECHNIQUES]
    if unknown:
        raise ValueError(f"unknown techniques {unknown}; expected some of {', '.join(TECHNIQUES)}")
    off = {name: False for name in TECHNIQUES if name != "metadata_boost"}
    rows = {"defaults": defaults,
            "none": replace(defaults.switched(**off), metadata_boost={}, category_boost=False)}
    on = set(defaults.switched_on())
    for name in ablate:
        if name == "metadata_boost":
            flipped = {"metadata_boost": {}, "category_boost": False} if name in on else _BOOST_ON
            rows[f"{'-' if name in on else '+'}{name}"] = replace(defaults, **flipped)
        else:
            rows[f"{'-' if name in on else '+'}{name}"] = defaults.switched(**{name: name not in on})
    return rows


def technique_runner(retriever: HybridRetriever, techniques: Techniques, variants_of, language_of,
                     write_pseudo_doc: PseudoDocWriter | None, applied: Counter[str] | None = None) -> ModeRunner:
    """Document ids for a question through run_techniques; `applied` counts the techniques that ran."""
    def run(question: str) -> list[str]:
        result = run_techniques(retriever, question, language_of(question), techniques, CHUNKS_PER_QUERY,
                                variants=variants_of(question), write_pseudo_doc=write_pseudo_doc)
        if applied is not None:
            applied.update(result.applied)
        return unique_in_order([hit.chunk.doc_id for hit in result.hits])
    return run


def run_ablation(dataset_dir: str | Path, ablate: Sequence[str], embedder: str = "e5-small",
                 limit: int | None = None, index_root: Path | None = None, chat_model: str = "",
                 progress: bool = True) -> tuple[str, list[ModeResult]]:
    """Evaluate the ablation rows on one dataset and print the table (R@k, AllGold@5, MRR, nDCG@10, p50);
    returns the dataset's name and the rows."""

    dataset = load_dataset(dataset_dir, limit=limit)
    bundle = dataset_index(dataset, embedder, index_root, progress)
    chosen: dict[str, Any] = {"chat_model": chat_model} if chat_model else {}
    context = Context(index=str(bundle.path), **chosen)
    config = operator()
    retriever = HybridRetriever(bundle, config.retrieval)
    bundle.embedder.embed_queries(["warm-up"])  # load the model before timing

    def variants_of(question: str) -> list[str]:
        keywords = keyword_form(question)
        return [keywords] if config.understand.keyword_variant and keywords.lower() != question.lower() else []

    write = pseudo_doc_writer(context) if {"query2doc", "hyde"} & set(ablate) else None
    rows = ablation_rows(config.techniques, ablate)
    applied: dict[str, Counter[str]] = {name: Counter() for name in rows}
    runners = {name: technique_runner(retriever, techniques, variants_of, language_of, write, applied[name])
               for name, techniques in rows.items()}
    results = evaluate_modes(dataset, runners, progress)
    for result in results:
        flipped = result.mode.lstrip("+-")
        if flipped in TECHNIQUES:
            result.metrics["ran_on"] = float(applied[result.mode][flipped])
    print(f"\n{dataset.name}: {len(dataset.questions)} questions, {bundle.manifest['counts']['chunks']} chunks, "
          f"embedder {bundle.settings.embedder}\n")
    print(markdown_table(results))
    return dataset.name, results


def summary_table(results: dict[str, list[ModeResult]]) -> str:
    """One row per ablation row, R@5 / nDCG@10 / p50 ms per dataset."""
    names = list(results)
    header = "| row | " + " | ".join(f"{name} R@5 | nDCG@10 | p50 ms | ran on" for name in names) + " |"
    lines = [header, "|---" * (1 + 4 * len(names)) + "|"]
    rows = [r.mode for r in next(iter(results.values()))]
    for row in rows:
        cells = []
        for name in names:
            metrics = next(r for r in results[name] if r.mode == row).metrics
            ran = metrics.get("ran_on", float("nan"))
            cells += [f"{metrics['R@5']:.3f}", f"{metrics['nDCG@10']:.3f}", f"{metrics['p50_ms']:.1f}",
                      "-" if ran != ran else f"{ran:.0f}"]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_ablations(datasets: Sequence[str | Path], ablate: Sequence[str], embedder: str = "e5-small",
                  limit: int | None = None, out: Path | None = None, index_root: Path | None = None,
                  chat_model: str = "", progress: bool = True) -> dict[str, list[ModeResult]]:
    """The ablation on every dataset, then one summary table (and a JSON report when `out` is given)."""
    results = {}
    for folder in datasets:
        name, rows = run_ablation(folder, ablate, embedder, limit, index_root, chat_model, progress)
        results[name] = rows
    print("\n" + summary_table(results))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        report = {"ablate": list(ablate), "limit": limit, "embedder": embedder, "chat_model": chat_model,
                  "machine": {"python": platform.python_version(), "platform": platform.platform(),
                              "cpus": os.cpu_count()},
                  "datasets": {name: {r.mode: r.metrics for r in rows} for name, rows in results.items()},
                  "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        out.write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(f"\nwrote {out}")
    return results
