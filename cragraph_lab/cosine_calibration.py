"""The cosine evaluator's calibration points measured on a benchmark folder: `python -m cragraph_lab bench
cosine-calibration DIR`.

For each question, the dense top_k over the set's corpus (passage = title + ". " + text) is split into gold and
non-gold passages by `supporting_ids`; evaluators.cosine.calibration_points turns their cosines into (cos_lo,
cos_hi), the pair evaluators.cosine.CALIBRATION ships per embedder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.cosine import calibration_points
from stores.types import titled


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def measure_on_dataset(data_dir: Path, embedder_name: str, top_k: int = 10, progress: bool = True) -> dict[str, Any]:
    """Gold vs non-gold cosines among each question's dense top_k over the set's corpus."""
    from models.embedder import load_embedder

    corpus, questions = _read_jsonl(data_dir / "corpus.jsonl"), _read_jsonl(data_dir / "questions.jsonl")
    embedder = load_embedder(embedder_name)
    passages = [titled(c.get("title") or "", c["text"]) for c in corpus]
    passage_vecs = embedder.embed_passages(passages, batch_size=32, progress=progress)
    query_vecs = embedder.embed_queries([q["question"] for q in questions], batch_size=32)
    ids = np.array([c["id"] for c in corpus])
    positive: list[float] = []
    negative: list[float] = []
    for question, qvec in zip(questions, query_vecs, strict=True):
        sims = passage_vecs @ qvec
        gold = set(question["supporting_ids"])
        for index in np.argsort(-sims)[:top_k]:
            (positive if ids[index] in gold else negative).append(float(sims[index]))
    cos_lo, cos_hi = calibration_points(positive, negative)
    return {
        "embedder": embedder_name, "top_k": top_k, "questions": len(questions),
        "positives": len(positive), "negatives": len(negative),
        "cos_lo": round(cos_lo, 4), "cos_hi": round(cos_hi, 4),
        "positive_pcts": np.percentile(positive, [5, 25, 50, 75, 95]).round(4).tolist(),
        "negative_pcts": np.percentile(negative, [5, 25, 50, 75, 95]).round(4).tolist(),
    }
