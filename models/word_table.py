"""The input word-piece table of the rebuilt e5-small, memory-mapped from its safetensors file without torch.

Most of e5-small's weights are this table (250k pieces); a text uses a few dozen of its rows. Mapped, a process
holds only the pages of the rows it reads, and every reader of the table in a process (the ONNX / OpenVINO
embedder, the embedded evaluator) shares them.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

WORD_TABLE_KEYS = ("embeddings.word_embeddings.weight", "bert.embeddings.word_embeddings.weight")
_DTYPES = {"F32": np.float32, "F16": np.float16}


def word_table(folder: Path) -> np.ndarray:
    """The table of `folder`/model.safetensors as a read-only float32 (or float16) array over the mapped file."""
    path = folder / "model.safetensors"
    with path.open("rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(size))
    name = next((key for key in WORD_TABLE_KEYS if key in header), None)
    if name is None:
        raise ValueError(f"{path} holds no word-piece table ({' or '.join(WORD_TABLE_KEYS)})")
    entry = header[name]
    if entry["dtype"] not in _DTYPES:
        raise ValueError(f"{path}: the word-piece table is {entry['dtype']}, not one of {', '.join(_DTYPES)}")
    begin, _ = entry["data_offsets"]
    return np.memmap(path, dtype=_DTYPES[entry["dtype"]], mode="r", offset=8 + size + begin,
                     shape=tuple(entry["shape"]))
