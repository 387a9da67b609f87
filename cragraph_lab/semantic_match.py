"""An answer judge without an API: cosine of answer vs gold on the embedder, thresholded.

Extractive answers are whole sentences, so EM and F1 count a correct but verbose answer wrong. SemMatch calls
an answer right when cos(answer, gold) >= threshold for some gold answer (both embedded as `query: ` texts).

Calibration (`python -m cragraph_lab bench semantic-calibration RESULTS.jsonl ...`): a labelled slice is built from
finished QA runs. Positives are (prediction, its own gold) pairs where the prediction contains the gold answer (the
normalized containment of bench.qa_metrics, a label independent of the embedder); negatives pair each
prediction with the gold of another question of the same run (same set, same language). The threshold is the
one that maximizes balanced accuracy on those pairs. Paraphrases that containment misses (e.g. "136 次" vs
"136 sacks") are what the judge adds beyond it; pairs where the prediction does not contain its gold are left
out of the calibration since their label is unknown.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cragraph.evaluation.qa_metrics import contains_answer, has_cjk, strip_citations

# e5-small, calibrated per answer script on the first 50 questions of hotpotqa_migres200 and XQuAD en / ru / zh,
# all six modes (`python -m cragraph_lab bench semantic-calibration` over those four results.jsonl): balanced accuracy
# en .850 (1,086 pairs), ru .898 (252), zh .850 (400). Answers in digits or Latin letters count as en whatever the set.
# Chinese needs its own cut: e5 puts Chinese texts closer together (at the en cut most zh negatives pass).
DEFAULT_THRESHOLDS = {"en": 0.784, "ru": 0.795, "zh": 0.845}
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")


def answer_language(text: str) -> str:
    """zh for CJK, ru for Cyrillic, en otherwise: the script decides which calibrated cut applies."""
    if has_cjk(text):
        return "zh"
    return "ru" if _CYRILLIC.search(text) else "en"


class SemanticJudge:
    """Embeds answers and golds once each (cached by text) and compares them by cosine."""

    def __init__(self, embedder: Any, threshold: float | dict[str, float] | None = None) -> None:
        self.embedder = embedder
        self.thresholds = dict(DEFAULT_THRESHOLDS) if threshold is None else (
            dict(threshold) if isinstance(threshold, dict) else dict.fromkeys(DEFAULT_THRESHOLDS, threshold))
        self._vectors: dict[str, np.ndarray] = {}

    def threshold_for(self, golds: Sequence[str]) -> float:
        language = answer_language(" ".join(golds))
        return self.thresholds.get(language, self.thresholds.get("en", 0.0))

    def _embed(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            vectors = np.asarray(self.embedder.embed_queries(missing), dtype=np.float32)
            self._vectors.update(zip(missing, vectors, strict=True))

    def similarity(self, prediction: str, golds: Sequence[str]) -> float:
        """Best cosine of the prediction (citations removed) to any gold; -1 for an empty prediction."""
        text = strip_citations(prediction)
        golds = [g for g in golds if g.strip()]
        if not text or not golds:
            return -1.0
        self._embed([text, *golds])
        return max(float(self._vectors[text] @ self._vectors[g]) for g in golds)

    def similarities(self, pairs: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
        """similarity() for many pairs, embedding all texts in one batch first."""
        self._embed([t for p, golds in pairs for t in [strip_citations(p), *golds] if t.strip()])
        return [self.similarity(p, golds) for p, golds in pairs]

    def matches(self, prediction: str, golds: Sequence[str]) -> float:
        return float(self.similarity(prediction, golds) >= self.threshold_for(golds))


def labelled_pairs(records: Sequence[dict[str, Any]], seed: int = 0) -> list[tuple[str, list[str], int]]:
    """(prediction, golds, label) pairs: containment positives and other-question negatives (see module doc)."""
    rng = random.Random(seed)
    answered = [r for r in records if not r.get("abstained") and strip_citations(r.get("answer", ""))]
    pairs: list[tuple[str, list[str], int]] = []
    for record in answered:
        if contains_answer(record["answer"], record["answers"]):
            pairs.append((record["answer"], list(record["answers"]), 1))
        for _ in range(5):  # a random other question whose gold the prediction does not contain
            other = rng.choice(answered)
            if other["id"] != record["id"] and not contains_answer(record["answer"], other["answers"]):
                pairs.append((record["answer"], list(other["answers"]), 0))
                break
    return pairs


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> tuple[float, float]:
    """The cut maximizing balanced accuracy, and that accuracy; cuts lie midway between sorted scores."""
    values = np.asarray(scores, dtype=float)
    truth = np.asarray(labels, dtype=bool)
    if truth.all() or not truth.any():
        raise ValueError("calibration needs both positive and negative pairs")
    ordered = np.unique(values)
    cuts = np.concatenate([[ordered[0] - 1e-6], (ordered[:-1] + ordered[1:]) / 2, [ordered[-1] + 1e-6]])
    best_cut, best_accuracy = float(cuts[0]), -1.0
    for cut in cuts:
        predicted = values >= cut
        accuracy = (predicted[truth].mean() + (~predicted[~truth]).mean()) / 2
        if accuracy > best_accuracy:
            best_cut, best_accuracy = float(cut), float(accuracy)
    return best_cut, best_accuracy


def calibrate(groups: Sequence[Sequence[dict[str, Any]]], judge: SemanticJudge) -> dict[str, Any]:
    """A threshold per answer language over the labelled pairs of every group (one group per run, so
    negatives stay in-set), with its balanced accuracy and its true / false positive rates."""
    pairs = [pair for records in groups for pair in labelled_pairs(records)]
    scores = np.asarray(judge.similarities([(p, g) for p, g, _ in pairs]))
    labels = np.asarray([label for _, _, label in pairs])
    languages = np.asarray([answer_language(" ".join(g)) for _, g, _ in pairs])
    result = {}
    for language in sorted(set(languages.tolist())):
        mask = languages == language
        threshold, accuracy = best_threshold(scores[mask].tolist(), labels[mask].tolist())
        passed = scores[mask] >= threshold
        truth = labels[mask] == 1
        result[language] = {"threshold": round(threshold, 4), "balanced_accuracy": round(accuracy, 4),
                            "tpr": round(float(passed[truth].mean()), 3),
                            "fpr": round(float(passed[~truth].mean()), 3), "pairs": int(mask.sum()),
                            "positives": int(truth.sum())}
    return result


def read_results(path: Path) -> list[dict[str, Any]]:
    """The records of one results.jsonl of a `python -m cragraph_lab eval qa` run."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def calibrate_results(paths: Sequence[Path], embedder: str = "e5-small") -> dict[str, Any]:
    """calibrate() over results.jsonl files, one group per file, judged on `embedder`."""
    from models.embedder import load_embedder

    groups = [read_results(path) for path in paths]
    return calibrate(groups, SemanticJudge(load_embedder(embedder)))
