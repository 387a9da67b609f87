"""`python -m cragraph_lab eval evaluator`: ROC-AUC of relevance scorers and the CRAG decisions they
lead to, on one dataset.

For every question the dataset's index (built through the product path, reused when unchanged) gives the
hybrid top-10 passages, each labelled gold or not. Three scorers grade the same lists:
- the evaluator under test (`embedded` by default, or any evaluator spec),
- `cosine`: e5 cosine between question and passage (the vectors the index stores), calibrated as
  evaluators/cosine.py does (the calibration does not change its ROC-AUC),
- `bm25`: the passage's BM25 score divided by the best BM25 score in the list.
ROC-AUC is over all (question, passage) pairs of the full run.

CRAG decisions: each question is run twice, on the full index and with its gold passages removed (the top-10
of the same ranking with the gold documents dropped: what an index without them returns, up to BM25's IDF
shifting slightly). The truth is `correct` when the list holds a gold passage and `incorrect` otherwise.
Thresholds are suggested per scorer from both runs (evaluators/thresholds.py); accuracy counts a question as
right when its grade equals the truth, so `ambiguous` is never right (its rate is reported beside it).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from cragraph_lab.datasets import load_dataset
from cragraph_lab.evaluator_training import roc_auc
from cragraph_lab.retrieval import dataset_index
from evaluators.cosine import default_calibration, map_cosines
from evaluators.thresholds import (
    DEFAULT_PRECISION,
    Thresholds,
    decision_report,
    save_thresholds,
    suggest_thresholds,
)
from rag.retrieval.retriever import HybridRetriever
from stores.types import Hit

TOP_K = 10
DEEP_K = 30  # enough ranks to refill a top-10 after dropping the gold documents' chunks


@dataclass
class ScorerResult:
    name: str
    auc: float
    thresholds: Thresholds
    accuracy: float
    ambiguous_rate: float
    full_counts: dict[str, int]
    removed_counts: dict[str, int]
    p50_ms_per_list: float | None = None


@dataclass
class EvaluatorEvalReport:
    dataset: str
    questions: int
    pairs: int
    positives: int
    gold_in_top10: float
    scorers: list[ScorerResult] = field(default_factory=list)

    def scorer(self, name: str) -> ScorerResult:
        return next(s for s in self.scorers if s.name == name)


def bm25_normalized(hits: Sequence[Hit]) -> list[float]:
    """Each hit's BM25 score over the list's best (0 for hits BM25 did not find, or a list without any)."""
    raw = [max(float(h.scores.get("bm25", 0.0)), 0.0) for h in hits]
    top = max(raw, default=0.0)
    return [r / top if top > 0 else 0.0 for r in raw]


def run_evaluator_eval(dataset_dir: str | Path, evaluator: str = "embedded", embedder: str = "e5-small",
                       limit: int | None = None, index_root: Path | None = None,
                       precision: float = DEFAULT_PRECISION, store_in: Path | None = None,
                       out: Path | None = None, progress: bool = True) -> EvaluatorEvalReport:
    from evaluators.embedded import RelevanceFeatures
    from evaluators.registry import load_evaluator

    dataset = load_dataset(dataset_dir, limit=limit)
    bundle = dataset_index(dataset, embedder, index_root, progress)
    retriever = HybridRetriever(bundle)
    under_test = load_evaluator(evaluator)
    # Index vectors for the cosine baseline, from the embedding cache (shared with the evaluator when it has one).
    vectors = getattr(under_test, "extractor", None)
    if vectors is None or vectors.embedder_name != embedder:
        vectors = RelevanceFeatures(embedder)
    cos_lo, cos_hi = default_calibration(embedder)
    names = (evaluator, "cosine", "bm25")
    scores: dict[str, dict[str, list[list[float]]]] = {n: {"full": [], "removed": []} for n in names}
    labels: list[list[bool]] = []
    latency: list[float] = []
    for question in tqdm(dataset.questions, desc=f"evaluator {dataset.name}", unit="q", disable=not progress):
        hits = retriever.search(question.question, k=DEEP_K)
        gold = set(question.supporting_ids)
        runs = {"full": hits[:TOP_K], "removed": [h for h in hits if h.chunk.doc_id not in gold][:TOP_K]}
        labels.append([h.chunk.doc_id in gold for h in runs["full"]])
        for run, run_hits in runs.items():
            passages = [h.chunk.passage for h in run_hits]
            started = time.perf_counter()
            scores[evaluator][run].append(under_test.score(question.question, passages) if passages else [])
            if run == "full":
                latency.append((time.perf_counter() - started) * 1000)
            # after the timed call, so the evaluator's time includes embedding the question
            query_vector = vectors.query_vector(question.question)
            cosines = vectors.passage_vectors(passages) @ query_vector if passages else np.zeros(0)
            scores["cosine"][run].append(map_cosines(cosines, cos_lo, cos_hi).tolist())
            scores["bm25"][run].append(bm25_normalized(run_hits))
    flat_labels = np.array([x for row in labels for x in row], dtype=bool)
    truth_full = [any(row) for row in labels]
    report = EvaluatorEvalReport(dataset.name, len(dataset.questions), int(len(flat_labels)),
                                 int(flat_labels.sum()), float(np.mean(truth_full)) if truth_full else 0.0)
    for name in names:
        full_best = [max(s, default=-np.inf) for s in scores[name]["full"]]
        removed_best = [max(s, default=-np.inf) for s in scores[name]["removed"]]
        best = full_best + removed_best
        truth = truth_full + [False] * len(removed_best)
        thresholds = suggest_thresholds(np.clip(best, -1, 1).tolist(), truth, precision)
        both = decision_report(best, truth, thresholds)
        full = decision_report(full_best, truth_full, thresholds)
        removed = decision_report(removed_best, [False] * len(removed_best), thresholds)
        flat_scores = np.array([x for row in scores[name]["full"] for x in row])
        report.scorers.append(ScorerResult(
            name="embedded" if name == evaluator and evaluator.strip().lower() == "embedded" else name,
            auc=roc_auc(flat_labels, flat_scores), thresholds=thresholds, accuracy=both.accuracy,
            ambiguous_rate=both.ambiguous_rate, full_counts=full.counts, removed_counts=removed.counts,
            p50_ms_per_list=statistics.median(latency) if name == evaluator and latency else None))
    print(f"\n{dataset.name}: {report.questions} questions, {report.pairs} pairs ({report.positives} gold), "
          f"gold in top-{TOP_K} for {report.gold_in_top10:.1%} of questions; evaluator {evaluator}\n")
    print(markdown_table(report))
    under = report.scorers[0]
    margin = under.auc - max(s.auc for s in report.scorers[1:])
    print(f"\n{under.name} ROC-AUC margin over the best baseline: {margin:+.4f}; "
          f"median {under.p50_ms_per_list:.1f} ms to score a list of {TOP_K} (question embedding included; "
          "passage vectors from the embedding cache, as for indexed chunks)")
    if store_in is not None:
        path = save_thresholds(store_in, evaluator, under.thresholds,
                               {"dataset": dataset.name, "precision": precision, "roc_auc": round(under.auc, 4)})
        print(f"stored thresholds for {evaluator!r} in {path}")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        payload: dict[str, Any] = {**asdict(report), "evaluator": evaluator, "precision": precision,
                                   "index": str(bundle.path), "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
        out.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=float), encoding="utf-8")
        print(f"wrote {out}")
    return report


def _rates(counts: dict[str, int]) -> str:
    total = max(sum(counts.values()), 1)
    return " / ".join(f"{counts[k] / total:.0%}" for k in ("correct", "ambiguous", "incorrect"))


def markdown_table(report: EvaluatorEvalReport) -> str:
    lines = ["| scorer | ROC-AUC | upper | lower | accuracy | ambiguous | full run c / a / i | "
             "gold removed c / a / i |", "|---|---|---|---|---|---|---|---|"]
    for s in report.scorers:
        lines.append(f"| {s.name} | {s.auc:.4f} | {s.thresholds.upper:+.3f} | {s.thresholds.lower:+.3f} | "
                     f"{s.accuracy:.3f} | {s.ambiguous_rate:.3f} | {_rates(s.full_counts)} | "
                     f"{_rates(s.removed_counts)} |")
    return "\n".join(lines)
