"""The reader as one exported graph, run by OpenVINO (the default) or ONNX Runtime (CRAGRAPH_READER_BACKEND=onnx):
word-piece rows in, start / end logits out; CRAGRAPH_READER_BACKEND=torch runs the torch reader instead.

Why: with the reader in torch, every cold ask imported torch and read all of e5-small's weights to run a model
the embedder's runtime already runs faster. The graph holds what the torch reader computes after the word-piece
lookup: position and type embeddings, e5-small's bottom layers (fp32, as the torch reader runs them), the
reader's own top layers and pointer.
The lookup itself reads the rows from the memory-mapped e5 table, as the exported embedder does, so a process holds
only the rows its texts use. It is exported once per user and weights (rag/reader/export.py, which needs torch),
under a file lock, into the model cache; agreement with the torch reader: `python -m cragraph_lab bench
reader-runtimes` (docs/benchmarks.md). The answer decision is fitted on this reader's scores, so the default
runtime and the decision's records go together.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

GRAPH_FORMAT = 1  # bump when the exported graph changes, so old exports are not reused
GRAPH_FILE = "reader.onnx"
WEIGHTS_FILE = "reader.npz"  # the reader's own weights in its folder (rag/reader/reader.py reads them)
INPUT, OUTPUTS = "inputs_embeds", ("start", "end")
BACKEND_ENV = "CRAGRAPH_READER_BACKEND"
TORCH = "torch"
GRAPH_RUNTIMES = {"openvino": "openvino", "onnx": "onnxruntime"}  # backend name -> the runtime that runs the graph
BACKENDS = (TORCH, *GRAPH_RUNTIMES)
DEFAULT_BACKEND = "openvino"


def reader_backend(backend: str | None = None) -> str:
    """The reader's backend: the argument, else $CRAGRAPH_READER_BACKEND, else openvino; ValueError if unknown."""
    chosen = (backend if backend is not None else os.environ.get(BACKEND_ENV, "")).strip().lower() or DEFAULT_BACKEND
    if chosen not in BACKENDS:
        raise ValueError(f"unknown reader backend {chosen!r} (use one of: {', '.join(BACKENDS)})")
    return chosen


def graph_folder(config: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """The cache folder of the graph exported from the reader's weights: named by their digest, so retrained
    weights get their own export."""
    from models.e5_rebuild import rebuilt_folder_name
    from models.paths import models_cache_dir

    digest = hashlib.blake2b(digest_size=8)
    for key in sorted(arrays):
        digest.update(f"{key}{arrays[key].dtype}{arrays[key].shape}".encode())
        digest.update(np.ascontiguousarray(arrays[key]).tobytes())
    digest.update(repr((config["split"], rebuilt_folder_name(), GRAPH_FORMAT)).encode())
    return models_cache_dir() / f"reader-graph{GRAPH_FORMAT}-{digest.hexdigest()}"


def ensure_graph(weights: Path, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """The exported graph of the reader's weights (read from the folder `weights`), exported on first use (torch
    is imported only then)."""
    from filelock import FileLock

    from models.paths import build_atomically

    folder = graph_folder(config, arrays)
    target = folder / GRAPH_FILE
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not target.is_file():
            from rag.reader.export import export_graph

            build_atomically(target, lambda path: export_graph(config, arrays, weights / WEIGHTS_FILE, path,
                                                               (INPUT, OUTPUTS)))
    return target


class GraphSpans:
    """Start / end logits of one encoded input from the exported graph: the torch reader's `head(bottom(ids))`."""

    def __init__(self, session: Any, words: np.ndarray) -> None:
        self.session = session
        self.words = words

    @classmethod
    def open(cls, weights: Path, config: dict[str, Any], arrays: dict[str, np.ndarray], runtime: str,
             threads: int | None = None) -> GraphSpans:
        """The graph of the reader's weights started in `runtime`; BackendStartError when it cannot start it."""
        from models.e5_rebuild import ensure_rebuilt_e5_small
        from models.onnx_embedder import open_session
        from models.word_table import word_table

        session = open_session(ensure_graph(weights, config, arrays), runtime, threads)
        return cls(session, word_table(ensure_rebuilt_e5_small()))

    def __call__(self, input_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.ascontiguousarray(self.words[input_ids[None]], dtype=np.float32)
        start, end = self.session.run(list(OUTPUTS), {INPUT: rows})
        return np.asarray(start[0]), np.asarray(end[0])
