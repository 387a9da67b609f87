"""Export of the reader to one ONNX graph (rag/reader/graph.py runs it): torch, imported only here, only once.

The graph starts after the word-piece lookup (input: the looked-up rows), so e5's 250k-row table stays in its
memory-mapped file; the bottom layers are e5-small's own, fp32, the top layers and pointer the reader's weights.
The reader's input is one sequence with no padding, so the graph takes no attention mask.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from rag.reader.encoder import SpanHead, load_head

_OPSET = 17


class ReaderGraph(nn.Module):
    """e5-small's embeddings after the lookup and its bottom layers, then the reader's head."""

    def __init__(self, bert: Any, head: SpanHead) -> None:
        super().__init__()
        embeddings = bert.embeddings
        self.position = embeddings.position_embeddings
        self.token_type = embeddings.token_type_embeddings
        self.norm = embeddings.LayerNorm
        self.bottom = bert.encoder.layer
        self.head = head

    def forward(self, inputs_embeds: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(inputs_embeds.shape[1])[None]
        hidden = self.norm(inputs_embeds + self.token_type.weight[0] + self.position(positions))
        for layer in self.bottom:
            hidden = layer(hidden, None)
        return self.head(hidden, torch.ones(inputs_embeds.shape[:2]))


def export_graph(config: dict[str, Any], arrays: dict[str, Any], weights_file: Path, target: Path,
                 names: tuple[str, tuple[str, ...]]) -> None:
    """Write the graph of reader weights (`config` and `arrays`, read from `weights_file`) to `target`, its input and
    outputs named by `names`."""
    from models.e5_rebuild import ensure_rebuilt_e5_small
    from models.e5_torch import load_bert

    bert = load_bert(ensure_rebuilt_e5_small(), config["split"])
    model = ReaderGraph(bert, load_head(arrays, config["split"], bert.config, weights_file)).eval()
    example = torch.zeros(1, 8, bert.config.hidden_size)
    source, outputs = names
    axes = {name: {0: "batch", 1: "sequence"} for name in (source, *outputs)}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about python values in shapes
        torch.onnx.export(model, (example,), str(target), input_names=[source], output_names=list(outputs),
                          dynamic_axes=axes, opset_version=_OPSET, dynamo=False)
