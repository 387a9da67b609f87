"""The trained relevance head: standardization + a small MLP, run in numpy, stored as one .npz file.

Why numpy and .npz: the head is a few thousand numbers; loading it needs no torch, no pickle (nothing
executable in a shipped file), and scoring 10 passages takes microseconds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class MLPHead:
    """p(relevant) = sigmoid(MLP((x - mean) / std)); hidden layers use ReLU."""

    feature_names: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    weights: list[np.ndarray]  # layer i: (in, out)
    biases: list[np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.weights) != len(self.biases) or not self.weights:
            raise ValueError("an MLP head needs one bias per weight matrix and at least one layer")
        if self.weights[0].shape[0] != len(self.feature_names) or self.weights[-1].shape[1] != 1:
            raise ValueError(f"head shape {[w.shape for w in self.weights]} does not fit "
                             f"{len(self.feature_names)} features and one output")

    def logits(self, features: np.ndarray) -> np.ndarray:
        x = (np.asarray(features, dtype=np.float64) - self.mean) / self.std
        for index, (weight, bias) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = x @ weight + bias
            if index < len(self.weights) - 1:
                x = np.maximum(x, 0.0)
        return x[:, 0]

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(features), -40, 40)))

    def scores(self, features: np.ndarray) -> np.ndarray:
        """Scores in [-1, 1]: 2 p - 1, so 0 is even odds of relevance."""
        return 2.0 * self.probabilities(features) - 1.0

    @classmethod
    def average(cls, heads: Sequence[MLPHead], meta: dict[str, Any] | None = None) -> MLPHead:
        """One MLP whose logit is the mean of the heads' logits (an ensemble, same inputs): hidden layers are
        stacked block-diagonally and the output layer divides by the number of heads."""
        if not heads:
            raise ValueError("no heads to average")
        first = heads[0]
        for head in heads[1:]:
            if head.feature_names != first.feature_names or not (
                    np.allclose(head.mean, first.mean) and np.allclose(head.std, first.std)):
                raise ValueError("heads to average must share features and standardization")
            if len(head.weights) != len(first.weights):
                raise ValueError("heads to average must have the same depth")
        depth, k = len(first.weights), len(heads)
        weights: list[np.ndarray] = []
        biases: list[np.ndarray] = []
        for layer in range(depth):
            parts = [h.weights[layer] for h in heads]
            layer_biases = [h.biases[layer] for h in heads]
            if layer == depth - 1:  # the output: the mean of the heads' logits
                stacked = parts if depth == 1 else [np.concatenate(parts, axis=0)]
                weight = np.sum(stacked, axis=0) / k if depth == 1 else stacked[0] / k
                bias = np.mean(layer_biases, axis=0)
            elif layer == 0:  # every head reads the same inputs
                weight, bias = np.concatenate(parts, axis=1), np.concatenate(layer_biases)
            else:  # hidden to hidden: each head only sees its own units
                weight = np.zeros((sum(p.shape[0] for p in parts), sum(p.shape[1] for p in parts)))
                row = col = 0
                for part in parts:
                    weight[row:row + part.shape[0], col:col + part.shape[1]] = part
                    row, col = row + part.shape[0], col + part.shape[1]
                bias = np.concatenate(layer_biases)
            weights.append(weight)
            biases.append(bias)
        return cls(first.feature_names, first.mean, first.std, weights, biases, meta or {})

    def save(self, path: Path) -> None:
        arrays: dict[str, Any] = {"mean": self.mean, "std": self.std}  # keyword arguments of np.savez
        for index, (weight, bias) in enumerate(zip(self.weights, self.biases, strict=True)):
            arrays[f"w{index}"] = weight.astype(np.float32)
            arrays[f"b{index}"] = bias.astype(np.float32)
        header = {"feature_names": list(self.feature_names), "layers": len(self.weights), "meta": self.meta}
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, header=np.array(json.dumps(header)), **arrays)

    @classmethod
    def load(cls, path: Path, expected_features: Sequence[str] | None = None) -> MLPHead:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            layers = int(header["layers"])
            head = cls(tuple(header["feature_names"]), data["mean"].astype(np.float64),
                       data["std"].astype(np.float64),
                       [data[f"w{i}"].astype(np.float64) for i in range(layers)],
                       [data[f"b{i}"].astype(np.float64) for i in range(layers)], header.get("meta", {}))
        if expected_features is not None and tuple(expected_features) != head.feature_names:
            raise ValueError(f"{path} was trained on features {list(head.feature_names)}, but this version "
                             f"computes {list(expected_features)}; retrain with `python -m cragraph_lab "
                             "train-evaluator`")
        return head
