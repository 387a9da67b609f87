"""Fit the reader's candidate re-ranker (rag.reader.rerank) on questions the span model was not trained on.

Why the validation split: on its own training questions the span model is over-confident, so a re-ranker fitted
there would learn to trust the span score too much. The validation part of the training data (never a reported
question) is read by the trained reader; each question's candidates with their features and whether each is a
gold answer form one listwise example. The linear model maximizes the likelihood of the gold candidates under a
softmax over the question's candidates, with an L2 penalty. Its worth is estimated by cross-validation on those
same questions (EM of the first candidate, before and after), then it is fitted on all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from cragraph.evaluation.qa_metrics import exact_match
from cragraph_lab.reader_examples import Example, training_examples
from rag.reader.questions import question_form
from rag.reader.reader import CONFIG_FILE, Reader
from rag.reader.rerank import FEATURES, features

L2 = 1e-2
STEPS = 300
FOLDS = 4


@dataclass
class Group:
    """One question's candidates: features [n, d], gold flags [n], its source set."""

    x: np.ndarray
    gold: np.ndarray
    source: str


def candidate_groups(reader: Reader, examples: list[Example]) -> list[Group]:
    """Candidates of every span-form question as the reader ranks them without a re-ranker (best first)."""
    reader.config.pop("reranker", None)
    groups = []
    for ex in tqdm(examples, desc="reader candidates", unit="question"):
        if question_form(ex.question, ex.language).kind != "span":
            continue
        _, _, candidates = reader.read_detailed(ex.question, ex.passages, ex.language)
        if not candidates:
            continue
        gold = np.array([exact_match(c.text, ex.answers) for c in candidates], dtype=np.float32)
        groups.append(Group(features(ex.question, candidates), gold, ex.source))
    return groups


def fit(groups: list[Group], l2: float = L2, steps: int = STEPS) -> np.ndarray:
    """Listwise logistic weights over the groups that have a gold candidate."""
    usable = [g for g in groups if g.gold.any()]
    w = torch.zeros(len(FEATURES), requires_grad=True)
    xs = [torch.from_numpy(g.x) for g in usable]
    golds = [torch.from_numpy(g.gold).bool() for g in usable]
    optimizer = torch.optim.LBFGS([w], lr=0.5, max_iter=steps, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = (
            torch.stack(
                [
                    torch.logsumexp(x @ w, 0) - torch.logsumexp((x @ w)[gold], 0)
                    for x, gold in zip(xs, golds, strict=True)
                ]
            ).mean()
            + l2 * (w * w).sum()
        )
        loss.backward()
        return loss

    optimizer.step(closure)
    return w.detach().numpy()


def first_correct(groups: list[Group], weights: np.ndarray | None) -> float:
    """EM of the first candidate (by the weights, or as the reader ranked them) over all groups."""
    hits = [float(g.gold[int(np.argmax(g.x @ weights))] if weights is not None else g.gold[0]) for g in groups]
    return float(np.mean(hits)) if hits else 0.0


def cross_validate(groups: list[Group], folds: int = FOLDS) -> dict[str, float]:
    """EM of the first candidate before / after re-ranking, each fold scored by weights fitted on the others."""
    fold_of = np.arange(len(groups)) % folds
    after = []
    for k in range(folds):
        weights = fit([g for g, f in zip(groups, fold_of, strict=True) if f != k])
        after += [g.gold[int(np.argmax(g.x @ weights))] for g, f in zip(groups, fold_of, strict=True) if f == k]
    return {
        "questions": len(groups),
        "EM_before": round(first_correct(groups, None), 4),
        "EM_after": round(float(np.mean(after)), 4) if after else 0.0,
    }


def fit_reranker(weights_dir: Path, data_root: Path | None = None) -> dict[str, Any]:
    """Fit on the validation split of the reader's training data; write the weights into its config.json."""
    reader = Reader.load(weights_dir)
    config = dict(reader.config)
    _, validation = training_examples(
        config["seed"], config["n_passages"], config["cmrc_train_max"], config["cmrc_dev_max"], data_root,
        config.get("min_passages"),
    )
    groups = candidate_groups(reader, validation)
    report = cross_validate(groups)
    weights = fit(groups)
    config["reranker"] = {
        "features": list(FEATURES),
        "weights": [round(float(v), 5) for v in weights],
        "cross_validation": report,
    }
    (weights_dir / CONFIG_FILE).write_text(json.dumps(config, indent=1))
    return report
