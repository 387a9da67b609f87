"""The reader's encoder: multilingual-e5-small split in two at layer `split`.

Why: fine-tuning all of e5-small is out of reach on a 2-core CPU, and a frozen e5 alone is tuned for mean
pooling, not for pointing at spans. So the bottom layers stay frozen and come from the project's fp32 e5
(the embedder instance when torch serves retrieval, else models/e5_torch.py), and only the top layers (copied from
e5, then fine-tuned) and a span head are the reader's own weights. The trainable BERT layer is written out here rather
than taken from transformers' private layer classes, whose signatures change between versions (checked
against BertModel.output_hidden_states: max abs difference 1e-6).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from transformers.models.bert.modeling_bert import BertLayer, BertModel


class Layer(nn.Module):
    """One post-LayerNorm BERT encoder layer (self-attention + GELU feed-forward)."""

    def __init__(
        self, hidden: int = 384, heads: int = 12, intermediate: int = 1536, eps: float = 1e-12, dropout: float = 0.1
    ) -> None:
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.inter = nn.Linear(hidden, intermediate)
        self.out = nn.Linear(intermediate, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """x: [batch, seq, hidden]; bias: additive attention mask [batch, 1, 1, seq] (0 or -inf-ish)."""
        b, n, h = x.shape
        d = h // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, self.heads, d).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + bias
        ctx = (self.drop(scores.softmax(-1)) @ v).transpose(1, 2).reshape(b, n, h)
        x = self.attn_norm(x + self.drop(self.attn_out(ctx)))
        return self.out_norm(x + self.drop(self.out(nn.functional.gelu(self.inter(x)))))

    @classmethod
    def from_bert(cls, bert_layer: BertLayer, eps: float) -> Layer:
        """A copy of a transformers BertLayer's weights."""
        hidden = bert_layer.attention.self.query.in_features
        layer = cls(
            hidden, bert_layer.attention.self.num_attention_heads, bert_layer.intermediate.dense.out_features, eps
        )
        pairs = {
            "query": bert_layer.attention.self.query,
            "key": bert_layer.attention.self.key,
            "value": bert_layer.attention.self.value,
            "attn_out": bert_layer.attention.output.dense,
            "attn_norm": bert_layer.attention.output.LayerNorm,
            "inter": bert_layer.intermediate.dense,
            "out": bert_layer.output.dense,
            "out_norm": bert_layer.output.LayerNorm,
        }
        with torch.no_grad():
            for name, source in pairs.items():
                getattr(layer, name).weight.copy_(source.weight)
                getattr(layer, name).bias.copy_(source.bias)
        return layer


def embedder_bert(model: SentenceTransformer) -> BertModel:
    """The BertModel inside a loaded e5 embedder: the reader's frozen bottom, and the weights its top starts from."""
    from transformers.models.bert.modeling_bert import BertModel

    bert = model[0].auto_model
    if not isinstance(bert, BertModel):
        raise TypeError(f"the reader reads a BERT encoder, not a {type(bert).__name__}")
    return bert


def attention_bias(mask: torch.Tensor) -> torch.Tensor:
    """[batch, seq] 1/0 mask -> additive bias broadcastable over heads and queries."""
    return (1.0 - mask[:, None, None, :].float()) * -1e4


class Bottom:
    """The frozen lower part of a loaded e5-small BertModel: embeddings + layers[:split].

    Runs the model's own forward on a shallow view that shares every parameter with the embedder (no copy).
    Reading, it is fp32, the states the exported graph (rag/reader/graph.py) computes, so the runtimes agree;
    training reads the int8 embedder's (`python -m cragraph_lab bench reader-training`), which trained a reader
    at least as good on fp32 states as fp32 training did (docs/answering.md, issue 57's tenth pass).
    """

    def __init__(self, bert: BertModel, split: int) -> None:
        view = copy.copy(bert)
        view._modules = dict(bert._modules)
        encoder = copy.copy(bert.encoder)
        encoder._modules = dict(bert.encoder._modules)
        encoder.layer = nn.ModuleList(list(bert.encoder.layer)[:split])
        view._modules["encoder"] = encoder
        self.model = view.eval()
        self.split = split

    @torch.inference_mode()
    def __call__(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=mask).last_hidden_state


class SpanHead(nn.Module):
    """The reader's own part: the top encoder layers and a start/end pointer."""

    def __init__(self, layers: list[Layer], hidden: int = 384) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.pointer = nn.Linear(hidden, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        bias = attention_bias(mask)
        for layer in self.layers:
            x = layer(x, bias)
        logits = self.pointer(x)
        return logits[..., 0], logits[..., 1]


def load_head(arrays: dict[str, Any], split: int, bert_config: Any, weights_file: Path) -> SpanHead:
    """The reader's own top layers and pointer from its weights, above e5's bottom `split` layers."""
    from rag.reader.types import ReaderWeightsError

    eps = bert_config.layer_norm_eps
    head = SpanHead([Layer(eps=eps) for _ in range(split, bert_config.num_hidden_layers)])
    try:
        head.load_state_dict({k: torch.from_numpy(v.astype(np.float32)) for k, v in arrays.items()})
    except RuntimeError as error:  # wrong keys or shapes: weights of another model
        raise ReaderWeightsError(weights_file, f"do not fit the reader ({error})") from error
    return head.eval()


class TorchSpans:
    """Start / end logits of one encoded input from the torch reader: the fp32 bottom, then the head."""

    def __init__(self, head: SpanHead, bottom: Bottom) -> None:
        self.head = head.eval()
        self.bottom = bottom

    def __call__(self, input_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = torch.from_numpy(input_ids)[None]
        mask = torch.ones_like(ids)
        with torch.inference_mode():
            start, end = self.head(self.bottom(ids, mask), mask)
        return start[0].numpy(), end[0].numpy()

