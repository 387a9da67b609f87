"""One calibrated decision: the probability that a candidate answer is right. One logistic regression over
features.MODEL_FEATURES (the signals and their interactions with the reading) ranks a question's candidates, and a
logistic map of the best one's log-odds, p = sigmoid(a * z + b), gives its probability (choosing the best of several
candidates makes the chosen one look surer than it is, so the map is fitted on the chosen ones; two parameters, so it
is smooth and moves little between domains, where a step map fitted on one pool of sets would not), both fitted on
training questions (a share of them asked of an index without their gold passages, so that "no right answer here"
is learned) by `python -m cragraph_lab bench decision-training`, which chooses by leaving one
training set out at a time.

The best candidate is answered when its probability reaches `answer_threshold`, a rule's answer like any other;
under the Truth score (right +1, abstain 0, wrong -1) answering pays exactly when that probability is above 0.5, so
0.5 is the break-even default, not a tuned number. The weights are plain JSON (no scikit-learn needed to read them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rag.answering.candidates import Candidate
from rag.answering.features import MODEL_FEATURES, model_vector

DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "weights" / "decision.json"
TRAINING_COMMAND = "python -m cragraph_lab bench decision-training"


class DecisionWeightsError(RuntimeError):
    """The decision model's weights are missing or unreadable: names the file and how to rebuild it."""

    def __init__(self, path: object, why: str) -> None:
        super().__init__(f"decision weights {path}: {why}. Rebuild them with `{TRAINING_COMMAND}`")
        self.path = path


@dataclass(frozen=True)
class DecisionModel:
    """z = intercept + sum coef * (x - mean) / scale over MODEL_FEATURES ranks the candidates; p = sigmoid(a * z + b)
    with (a, b) = `calibration` ((1, 0): the logistic regression's own probability)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    calibration: tuple[float, float] = (1.0, 0.0)

    def score(self, features: dict[str, float]) -> float:
        """z: the candidate's log-odds before calibration (what ranks the candidates)."""
        return self.intercept + sum(
            c * (x - m) / s for x, m, s, c in zip(model_vector(features), self.mean, self.scale, self.coef, strict=True)
        )

    def calibrated(self, z: float) -> float:
        """The probability of being right of a question's best candidate scored z."""
        a, b = self.calibration
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, a * z + b))))

    def probability(self, features: dict[str, float]) -> float:
        return self.calibrated(self.score(features))

    def as_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "calibration": list(self.calibration)}


def choose(candidates: Sequence[Candidate], model: DecisionModel) -> Candidate:
    """Set every candidate's probability and return the model's best."""
    scores = [model.score(candidate.features) for candidate in candidates]
    for candidate, z in zip(candidates, scores, strict=True):
        candidate.probability = model.calibrated(z)
    return candidates[max(range(len(candidates)), key=lambda i: scores[i])]


def answers(chosen: Candidate, threshold: float) -> bool:
    """Whether the chosen candidate is given: its probability reaches the threshold (`answer_threshold`)."""
    return chosen.probability >= threshold


@lru_cache(maxsize=4)
def load_decision(path: str = "") -> DecisionModel:
    """The model at `path` (empty: the packaged one), checked against this version's features."""
    file = Path(path) if path else DEFAULT_WEIGHTS
    if not file.is_file():
        raise DecisionWeightsError(file, "missing")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        model = DecisionModel(tuple(data["features"]), tuple(map(float, data["mean"])),
                              tuple(map(float, data["scale"])), tuple(map(float, data["coef"])),
                              float(data["intercept"]), _pair(data.get("calibration", (1.0, 0.0))))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DecisionWeightsError(file, f"unreadable ({error})") from error
    if model.features != MODEL_FEATURES:
        raise DecisionWeightsError(file, "fitted on other features than this version's")
    if (not (len(model.mean) == len(model.scale) == len(model.coef) == len(MODEL_FEATURES)) or 0.0 in model.scale
            or not all(map(math.isfinite, (*model.coef, model.intercept, *model.calibration)))):
        raise DecisionWeightsError(file, "damaged (lengths, scales or values do not fit)")
    return model


def _pair(values: Any) -> tuple[float, float]:
    a, b = (float(v) for v in values)
    return a, b
