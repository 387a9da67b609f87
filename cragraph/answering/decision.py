"""One calibrated decision: the probability that a candidate answer is right. One logistic regression over
features.MODEL_FEATURES (the signals and their interactions with the reading) ranks a question's candidates, and an
isotonic map of the best one's log-odds gives its probability (choosing the best of several candidates makes the chosen
one look surer than it is, so the map is fitted on the chosen ones), both fitted out of fold on training questions (a
share of them asked of an index without their gold passages, so that "no right answer here" is learned) by `cragraph
bench decision-training`.

The best candidate is answered when its probability reaches `answer_threshold`; under the Truth score (right +1, abstain
0, wrong -1) answering pays exactly when that probability is above 0.5, so 0.5 is the break-even default, not a tuned
number. The weights are plain JSON (no scikit-learn needed to read them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cragraph.answering.candidates import Candidate
from cragraph.answering.features import MODEL_FEATURES, RULES, model_vector

DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "weights" / "decision.json"
TRAINING_COMMAND = "cragraph bench decision-training"


class DecisionWeightsError(RuntimeError):
    """The decision model's weights are missing or unreadable: names the file and how to rebuild it."""

    def __init__(self, path: object, why: str) -> None:
        super().__init__(f"decision weights {path}: {why}. Rebuild them with `{TRAINING_COMMAND}`")
        self.path = path


@dataclass(frozen=True)
class DecisionModel:
    """z = intercept + sum coef * (x - mean) / scale over MODEL_FEATURES ranks the candidates; p is the isotonic
    map of z, piecewise linear through the points (calibration_z, calibration_p) and flat beyond them (with no
    points: the logistic sigmoid of z)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    calibration_z: tuple[float, ...] = ()
    calibration_p: tuple[float, ...] = ()

    def score(self, features: dict[str, float]) -> float:
        """z: the candidate's log-odds before calibration (what ranks the candidates)."""
        return self.intercept + sum(
            c * (x - m) / s for x, m, s, c in zip(model_vector(features), self.mean, self.scale, self.coef, strict=True)
        )

    def calibrated(self, z: float) -> float:
        """The probability of being right of a question's best candidate scored z."""
        if not self.calibration_z:
            return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
        return float(np.interp(z, self.calibration_z, self.calibration_p))

    def probability(self, features: dict[str, float]) -> float:
        return self.calibrated(self.score(features))

    def as_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept,
                "calibration_z": list(self.calibration_z), "calibration_p": list(self.calibration_p)}


def choose(candidates: Sequence[Candidate], model: DecisionModel) -> Candidate:
    """Set every candidate's probability and return the one to give: the model's best, or a rule's answer, which
    is given whenever its rule decided (see features.RULES)."""
    scores = [model.score(candidate.features) for candidate in candidates]
    for candidate, z in zip(candidates, scores, strict=True):
        candidate.probability = model.calibrated(z)
    ruled = next((c for c in candidates if c.reading in RULES), None)
    return ruled or candidates[max(range(len(candidates)), key=lambda i: scores[i])]


def answers(chosen: Candidate, threshold: float) -> bool:
    """Whether the chosen candidate is given: a rule's answer always, any other when its probability reaches the
    threshold (`answer_threshold`)."""
    return chosen.reading in RULES or chosen.probability >= threshold


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
                              float(data["intercept"]), tuple(map(float, data.get("calibration_z", ()))),
                              tuple(map(float, data.get("calibration_p", ()))))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DecisionWeightsError(file, f"unreadable ({error})") from error
    if model.features != MODEL_FEATURES:
        raise DecisionWeightsError(file, "fitted on other features than this version's")
    if (not (len(model.mean) == len(model.scale) == len(model.coef) == len(MODEL_FEATURES)) or 0.0 in model.scale
            or len(model.calibration_z) != len(model.calibration_p)
            or any(b < a for a, b in zip(model.calibration_z, model.calibration_z[1:], strict=False))):
        raise DecisionWeightsError(file, "damaged (lengths or scales do not fit)")
    return model
