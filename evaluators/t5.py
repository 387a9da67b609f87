"""The CRAG retrieval evaluator: a T5 encoder-decoder with a one-logit regression head.

CRAG (Yan et al., 2024) fine-tunes T5-large as `T5ForSequenceClassification(num_labels=1)` on inputs
`"{question} [SEP] {passage}"` with targets in [-1, 1] (1 relevant, -1 irrelevant), and thresholds the raw
regression output directly (e.g. upper 0.59, lower -0.99 on PopQA). So the score here is the raw logit
clamped to [-1, 1]: clamping keeps every threshold comparison the paper makes, and only trims the rare
overshoot of a regression head. (A model trained with another objective needs its own mapping.)

Inputs follow the CRAG repository's inference script: the tokenizer's text for the pair, truncated to the
model length (tokenizer.model_max_length capped at 512), ending in exactly one </s>, which the
classification head reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluators.base import RelevanceEvaluator, load_error, resolve_model_source

if TYPE_CHECKING:
    from transformers import BatchEncoding

MAX_LENGTH_CAP = 512


class T5Evaluator(RelevanceEvaluator):
    """Scores with a CRAG-style T5 relevance model from a Hugging Face id or a local folder (CPU)."""

    def __init__(self, model: str, max_length: int | None = None, device: str = "cpu") -> None:
        import torch  # imported first: fail early with the real error if torch is missing
        from transformers import AutoTokenizer, T5ForSequenceClassification

        from models.loading import quiet_weight_loading

        quiet_weight_loading()
        source = resolve_model_source(model, "t5")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = T5ForSequenceClassification.from_pretrained(source)
        except OSError as err:
            raise load_error("t5", source, err) from err
        if self.model.config.num_labels != 1:
            raise ValueError(
                f"t5 evaluator {source!r} has num_labels={self.model.config.num_labels}; CRAG's evaluator is "
                f"a one-logit regression head (num_labels=1)"
            )
        if self.tokenizer.eos_token_id is None:
            raise ValueError(f"t5 evaluator tokenizer of {source!r} has no eos token; the head reads </s>")
        module: torch.nn.Module = self.model  # PreTrainedModel.to's decorator hides its signature from mypy
        module.to(device).eval()
        self.device = device
        self.source = source
        self.name = f"t5:{model}"
        tokenizer_max = int(min(self.tokenizer.model_max_length or MAX_LENGTH_CAP, MAX_LENGTH_CAP))
        self.max_length = min(max_length, tokenizer_max) if max_length else tokenizer_max

    def _encode(self, question: str, passages: list[str]) -> BatchEncoding:
        """Token ids for each pair, truncated to max_length with one final </s>; the head reads the last </s>,
        and T5ForSequenceClassification requires the same number of </s> per row, so stray ones are dropped."""
        eos = self.tokenizer.eos_token_id
        texts = [f"{question} [SEP] {passage}" for passage in passages]
        ids = self.tokenizer(texts, add_special_tokens=False, truncation=True, max_length=self.max_length - 1)[
            "input_ids"
        ]
        rows = [[t for t in row if t != eos] + [eos] for row in ids]
        return self.tokenizer.pad({"input_ids": rows}, padding=True, return_tensors="pt")

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        import torch

        batch = self._encode(question, passages)
        with torch.inference_mode():
            logits = self.model(
                input_ids=batch["input_ids"].to(self.device),
                attention_mask=batch["attention_mask"].to(self.device),
            ).logits
        return [float(x) for x in logits.view(-1).tolist()]
