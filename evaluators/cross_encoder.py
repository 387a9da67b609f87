"""A sentence-transformers CrossEncoder as a relevance evaluator (e.g. ms-marco or BGE rerankers).

Mapping into [-1, 1]: the cross-encoder's raw logits are read (activation switched off, so a model's saved
activation cannot change the scale) and mapped as
  one logit:  score = 2 * sigmoid(logit) - 1  (= tanh(logit / 2)), i.e. 2p - 1 for the relevance probability p;
  two logits: score = 2 * softmax(logits)[1] - 1 (label 1 = relevant, as binary rerankers are trained).
So 0 means p = 0.5, and CRAG thresholds read as probabilities: upper 0.5 is p > 0.75.
"""

from __future__ import annotations

import math

from evaluators.base import RelevanceEvaluator, load_error, resolve_model_source

MAX_LENGTH_CAP = 512


class CrossEncoderEvaluator(RelevanceEvaluator):
    """Scores (question, passage) pairs with a CrossEncoder from a Hugging Face id or a local folder (CPU)."""

    def __init__(self, model: str, max_length: int | None = None, device: str = "cpu") -> None:
        from sentence_transformers import CrossEncoder

        from models.loading import quiet_weight_loading

        quiet_weight_loading()
        source = resolve_model_source(model, "cross-encoder")
        try:
            self.model = CrossEncoder(source, device=device)
        except OSError as err:
            raise load_error("cross-encoder", source, err) from err
        if self.model.num_labels not in (1, 2):
            raise ValueError(
                f"cross-encoder {source!r} has {self.model.num_labels} labels; a relevance model has 1 (a score) "
                f"or 2 (irrelevant, relevant)"
            )
        limits = [self.model.max_seq_length, getattr(self.model.tokenizer, "model_max_length", None),
                  MAX_LENGTH_CAP, max_length]
        self.model.max_seq_length = int(min(x for x in limits if x))
        self.max_length = self.model.max_seq_length
        self.source = source
        self.name = f"cross-encoder:{model}"

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        import torch

        raw = self.model.predict(
            [(question, p) for p in passages],
            batch_size=len(passages),
            activation_fn=torch.nn.Identity(),
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if self.model.num_labels == 1:
            return [math.tanh(float(logit) / 2.0) for logit in raw.reshape(-1)]
        probs = torch.softmax(torch.as_tensor(raw, dtype=torch.float32), dim=-1)[:, 1]
        return [2.0 * float(p) - 1.0 for p in probs]
