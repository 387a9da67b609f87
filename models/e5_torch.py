"""The packaged e5-small's BERT encoder in plain torch, and its tokenizer, without sentence-transformers.

Why: a cold `cragraph ask` spent most of its time importing sentence-transformers and transformers' model classes
(issue 44: 13 s of 16.6 s opening the embedder) to build a model whose query vectors the ONNX / OpenVINO backends
already give. What the question still needs from the torch model is the reader's bottom layers (where its
exported graph cannot run) and, for the embedded evaluator, the tokenizer and the input word-piece table. This
module builds the same BertModel (the same module names, so the same weights, the same scaled-dot-product
attention) from the rebuilt folder's model.safetensors, and the folder's word pieces
(FastTokenizer, models/piece_tokenizer.py). tests/integration/test_e5_torch.py checks the ids, offsets,
hidden states and the reader's scores against the sentence-transformers model and its tokenizer.

Only the packaged e5-small goes this way (a BERT of the shape its config.json gives); other embedders, and the
lab's training, load sentence-transformers as before.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

from models.e5_parts import load_tokenizer, sentence_transformers_open


def _uninitialized_embedding(rows: int, dim: int, padding_idx: int | None = None) -> nn.Embedding:
    """An nn.Embedding whose table is left as allocated (the file's weights replace it): its own normal_
    initialization on the meta device imports torch._dynamo (sympy, pandas, sklearn, onnxruntime ...)."""
    return nn.Embedding(rows, dim, padding_idx=padding_idx, _weight=torch.empty(rows, dim))


class Embeddings(nn.Module):
    """BertEmbeddings: word + token type (0) + absolute position, LayerNorm."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        self.word_embeddings = _uninitialized_embedding(config.vocab_size, config.hidden_size, config.pad_token_id)
        self.position_embeddings = _uninitialized_embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = _uninitialized_embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        seq = input_ids.shape[1]
        positions = torch.arange(seq, device=input_ids.device)[None]
        types = torch.zeros_like(input_ids)
        embedded = self.word_embeddings(input_ids) + self.token_type_embeddings(types)
        return self.LayerNorm(embedded + self.position_embeddings(positions))


class SelfAttention(nn.Module):
    def __init__(self, config: Any) -> None:
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        shape = (*hidden.shape[:-1], -1, self.attention_head_size)
        query = self.query(hidden).view(*shape).transpose(1, 2)
        key = self.key(hidden).view(*shape).transpose(1, 2)
        value = self.value(hidden).view(*shape).transpose(1, 2)
        out = nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                                         scale=self.attention_head_size ** -0.5)
        return out.transpose(1, 2).contiguous().reshape(*hidden.shape[:-1], -1).contiguous()


class DenseNorm(nn.Module):
    """BertSelfOutput / BertOutput: dense, then LayerNorm of the residual sum."""

    def __init__(self, inner: int, hidden: int, eps: float) -> None:
        super().__init__()
        self.dense = nn.Linear(inner, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(x) + residual)


class Attention(nn.Module):
    def __init__(self, config: Any) -> None:
        super().__init__()
        self.self = SelfAttention(config)
        self.output = DenseNorm(config.hidden_size, config.hidden_size, config.layer_norm_eps)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return self.output(self.self(hidden, mask), hidden)


class Intermediate(nn.Module):
    def __init__(self, config: Any) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(self.dense(x))


class Layer(nn.Module):
    """BertLayer, with transformers' module names (so the reader's Layer.from_bert applies)."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        self.attention = Attention(config)
        self.intermediate = Intermediate(config)
        self.output = DenseNorm(config.intermediate_size, config.hidden_size, config.layer_norm_eps)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        attended = self.attention(hidden, mask)
        return self.output(self.intermediate(attended), attended)


class Encoder(nn.Module):
    def __init__(self, config: Any, layers: int | None = None) -> None:
        super().__init__()
        count = config.num_hidden_layers if layers is None else layers
        self.layer = nn.ModuleList(Layer(config) for _ in range(count))


class Bert(nn.Module):
    """BertModel's encoder path (no pooler): forward(input_ids=, attention_mask=).last_hidden_state.

    With `layers`, only the bottom layers are built (a caller that reads the states of layer `layers`, as the
    reader does); `config` still describes the whole model, since the reader sizes its own top from it."""

    def __init__(self, config: Any, layers: int | None = None) -> None:
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        self.encoder = Encoder(config, layers)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> SimpleNamespace:
        hidden = self.embeddings(input_ids)
        mask = None
        if attention_mask is not None and not bool(attention_mask.all()):
            mask = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        for layer in self.encoder.layer:
            hidden = layer(hidden, mask)
        return SimpleNamespace(last_hidden_state=hidden)


_CONFIG_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                  "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "pad_token_id")


def read_config(folder: Path) -> SimpleNamespace:
    raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if raw.get("model_type") != "bert" or raw.get("hidden_act", "gelu") != "gelu" or \
            raw.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{folder / 'config.json'} is not a BERT with GELU and absolute positions")
    return SimpleNamespace(**{name: raw[name] for name in _CONFIG_FIELDS})


def load_bert(folder: Path, layers: int | None = None) -> Bert:
    """The encoder of a rebuilt e5-small folder, fp32, in eval mode; with `layers`, its bottom layers only."""
    from safetensors.torch import load_file

    with torch.device("meta"):  # no random initialization of 118M weights that the file replaces (0.5 s)
        model = Bert(read_config(folder), layers)
    kept = len(model.encoder.layer)
    state = {name: v for k, v in load_file(str(folder / "model.safetensors")).items()
             if _wanted(name := k.removeprefix("bert."), kept)}
    model.load_state_dict(state, strict=True, assign=True)
    return model.eval()


def _wanted(name: str, layers: int) -> bool:
    """Whether a weight of the file belongs to the model built: not the pooler, nor a layer above `layers`."""
    if name.startswith("pooler."):
        return False
    if name.startswith("encoder.layer."):
        return int(name.split(".")[2]) < layers
    return True


@dataclass
class LightE5:
    """What the torch reader reads of the packaged e5-small: `bert` (fp32) and `tokenizer`."""

    bert: Any  # this module's Bert, or transformers' BertModel when the sentence-transformers model is open
    tokenizer: Any


_light: list[LightE5] = []  # the process's one, once built
_light_lock = threading.Lock()


def light_e5(layers: int | None = None) -> LightE5:
    """The process's plain-torch e5-small, fp32, built once.

    `layers`: how many bottom layers the caller runs (None: all). Only those are read, the reader running the
    bottom of the model only; a cached model with fewer layers than asked is built again."""
    from models.e5_rebuild import ensure_rebuilt_e5_small

    with _light_lock:
        folder = ensure_rebuilt_e5_small()
        if not _light or len(_light[0].bert.encoder.layer) < _depth(folder, layers):
            tokenizer = _light[0].tokenizer if _light else load_tokenizer(folder)
            _light[:] = [LightE5(load_bert(folder, layers), tokenizer)]
        return _light[0]


def _depth(folder: Path, layers: int | None) -> int:
    return int(read_config(folder).num_hidden_layers) if layers is None else layers


def e5_fp32(layers: int | None = None) -> LightE5:
    """The fp32 e5-small the torch reader's bottom runs (the states the exported graph computes): the process's
    sentence-transformers model when it is open already (no second read of the folder), else the plain-torch one
    of this module, with at least its bottom `layers` layers (None: all). Both give the same states bit for bit."""
    from models import embedder as embedders

    if sentence_transformers_open():
        model = embedders.load_embedder(embedders.E5_SMALL, backend=embedders.TORCH).model
        return LightE5(model[0].auto_model, model.tokenizer)
    return light_e5(layers=layers)
