"""An ONNX Runtime path for the packaged e5-small: fp32 with the sentence-transformers vectors, and int8.

The rebuilt sentence-transformers folder (models/e5_rebuild.py) is exported once per user with
torch.onnx.export (BertModel + mean pooling + L2 normalization in the graph, dynamic batch and sequence axes)
into a sibling cache folder; `onnx-int8` adds a dynamically quantized copy (onnxruntime.quantization, int8
weights per output channel, activations quantized per batch at run time). Both are written like the rebuild:
under a file lock, to a temporary file renamed into place, so concurrent processes never see half a model.

The graph starts after the word-piece lookup: it takes the rows of the input table (250k pieces x 384, most of
the model's weights) as `inputs_embeds`, and the runner gathers them from the rebuilt folder's safetensors file,
memory-mapped (models/word_table.py), so a process holds only the rows its texts use, and the table the
evaluator reads is the same mapped file. The rest of the graph (position and type embeddings, the layers, pooling)
is what BertModel computes after its own lookup, so the vectors are the same.

Texts are tokenized once, sorted by token length and embedded in batches padded only to their own longest
text, then put back in the caller's order. The fp32 graph gives the sentence-transformers vectors (cosine
> 0.9999 on hotpotqa passages, tests/integration/test_onnx_embedder.py), so a bundle built on torch opens,
searches and grows on onnx. int8 is close, not equal: cosine to fp32 0.998 min / 0.9988 mean on hotpotqa
passages, and, activations being quantized per batch, a text's int8 vector moves by about as much with its
batch mates. Dense R@5 did not move on the sets measured (README), so int8 vectors may sit beside fp32 ones
in a bundle; the embedding cache still keeps them apart (its model key fingerprints the vectors), so an fp32
build never reuses int8 vectors.

Backends, chosen per process by CRAGRAPH_EMBED_BACKEND (or `load_embedder(..., backend=)`):
  openvino   the default: OpenVINO on the fp32 graph, at the CPU's own inference precision: bfloat16 where the
             CPU has AMX or AVX-512 BF16 (matrix units that multiply bf16 at several times the fp32 rate,
             accumulating in fp32, so the vectors stay within rounding of fp32), fp32 elsewhere. Chosen side by
             side with torch (`python -m cragraph_lab bench embed-speed`, docs/benchmarks.md): the fastest backend whose
             retrieval stays within .005 R@5 of torch's. Where it cannot start (no OpenVINO for this CPU,
             oneDNN capped), the embedder warns and runs on torch;
  torch      sentence-transformers fp32, the reference, and the default on a CUDA GPU;
  onnx       ONNX Runtime fp32 (the same vectors);
  onnx-int8  ONNX Runtime int8 (faster; its vectors differ slightly from fp32).
CRAGRAPH_EMBED_THREADS (set by `cragraph index --workers N`) sets the intra-op threads of either runtime.
CUDA is used when torch sees it (and onnxruntime has its CUDA provider).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.paths import build_atomically

logger = logging.getLogger(__name__)
ONNX_FORMAT = 2  # bump when the exported graph or the quantization recipe changes, so old caches are not reused
BACKEND_ENV = "CRAGRAPH_EMBED_BACKEND"
THREADS_ENV = "CRAGRAPH_EMBED_THREADS"
TORCH, ONNX, ONNX_INT8, OPENVINO = "torch", "onnx", "onnx-int8", "openvino"
BACKENDS = (TORCH, ONNX, ONNX_INT8, OPENVINO)
DEFAULT_BACKEND = OPENVINO  # the fastest at R@5 within .005 of torch (docs/benchmarks.md, embed-speed)
FP32_FILE = "model.onnx"
INT8_FILE = "model.int8.onnx"
OPENVINO_CACHE = "openvino-cache"  # OpenVINO's compiled models, beside the graphs they were compiled from
_OPSET = 17

# e5-small's FFN output projections whose int8 error moves the sentence vectors most (as for the torch int8
# reader, models/embedder.py E5_SMALL_FP32_LINEARS); their MatMuls stay fp32 in the int8 graph.
_FP32_MATMULS = ("/layer.0/output/dense/", "/layer.4/output/dense/", "/layer.5/output/dense/")


def resolve_backend(backend: str | None = None) -> str:
    """The backend to use: the argument, else $CRAGRAPH_EMBED_BACKEND, else the default; ValueError if unknown."""
    chosen = (backend if backend is not None else os.environ.get(BACKEND_ENV, "")).strip().lower()
    chosen = chosen or DEFAULT_BACKEND
    if chosen not in BACKENDS:
        raise ValueError(f"unknown embedding backend {chosen!r} (use one of: {', '.join(BACKENDS)})")
    return chosen


def embed_threads() -> int | None:
    """Intra-op threads from $CRAGRAPH_EMBED_THREADS (None: the runtime's default)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return None
    threads = int(raw)
    if threads < 1:
        raise ValueError(f"{THREADS_ENV} must be a positive number of threads, got {raw!r}")
    return threads


def precision(backend: str) -> str:
    """What a backend's vectors are: "fp32" (torch, onnx and openvino give the same vectors, openvino's bf16
    within rounding) or "int8"."""
    return "int8" if resolve_backend(backend) == ONNX_INT8 else "fp32"


def onnx_folder(rebuilt: Path) -> Path:
    """The cache folder of the exported graphs, beside the rebuilt sentence-transformers folder."""
    return rebuilt.parent / f"{rebuilt.name}-onnx{ONNX_FORMAT}"


def use_cuda() -> bool:
    """Whether torch sees a GPU. Without an NVIDIA driver (Linux: no /proc/driver/nvidia, and no /dev/dxg of WSL)
    the answer is no without importing torch, a 2 s import a query on ONNX / OpenVINO does not otherwise need."""
    if sys.platform.startswith("linux") and not (Path("/proc/driver/nvidia").exists() or Path("/dev/dxg").exists()):
        return False
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return False
    return bool(torch.cuda.is_available())


def export_onnx(model_folder: Path, target: Path) -> None:
    """Export the BertModel of a sentence-transformers folder after its word-piece lookup (input: the looked-up
    rows), with mean pooling and normalization, to `target`."""
    import torch
    from transformers import AutoModel

    from models.loading import quiet_weight_loading

    quiet_weight_loading()
    bert = AutoModel.from_pretrained(str(model_folder), attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, inputs_embeds: Any, attention_mask: Any) -> Any:
            token_type_ids = torch.zeros_like(attention_mask)
            hidden = self.inner(inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                                token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    ids = torch.tensor([[0, 10, 20, 2], [0, 30, 2, 1]], dtype=torch.long)
    mask = (ids != 1).long()
    with torch.no_grad():
        rows = bert.get_input_embeddings()(ids)
    axes = {"inputs_embeds": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "embedding": {0: "batch"}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about python booleans in transformers' mask code
        torch.onnx.export(Pooled(bert), (rows, mask), str(target), input_names=["inputs_embeds", "attention_mask"],
                          output_names=["embedding"], dynamic_axes=axes, opset_version=_OPSET, dynamo=False)


def quantize_int8(source: Path, target: Path) -> None:
    """Dynamic int8 quantization of the MatMuls (per output channel), all but _FP32_MATMULS."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(source), load_external_data=False).graph
    keep = [n.name for n in graph.node if n.op_type == "MatMul" and any(p in n.name for p in _FP32_MATMULS)]
    quantize_dynamic(str(source), str(target), op_types_to_quantize=["MatMul"], per_channel=True,
                     weight_type=QuantType.QInt8, nodes_to_exclude=keep)


def remove_older_formats(rebuilt: Path) -> None:
    """Delete the graphs earlier versions exported for this folder (a few hundred MB each): the new format
    replaced them, and nothing of this version reads them."""
    for version in range(1, ONNX_FORMAT):
        old = rebuilt.parent / f"{rebuilt.name}-onnx{version}"
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
            logger.info("removed %s, the graphs of an older format", old)
        with contextlib.suppress(OSError):
            Path(f"{old}.lock").unlink()


def ensure_onnx(rebuilt: Path, int8: bool = False) -> Path:
    """The cached graph for a rebuilt folder (fp32, or int8 made from the fp32 one), exported on first use."""
    from filelock import FileLock

    folder = onnx_folder(rebuilt)
    fp32, quantized = folder / FP32_FILE, folder / INT8_FILE
    wanted = quantized if int8 else fp32
    if wanted.is_file():
        return wanted
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not fp32.is_file():
            build_atomically(fp32, lambda path: export_onnx(rebuilt, path))
            remove_older_formats(rebuilt)
        if int8 and not quantized.is_file():
            build_atomically(quantized, lambda path: quantize_int8(fp32, path))
    return wanted


class BackendStartError(RuntimeError):
    """The ONNX Runtime or OpenVINO session could not start (raised on first use, not when the embedder loads)."""


class OpenVinoSession:
    """The exported graph compiled by OpenVINO for the CPU, answering ONNX Runtime's `run` call."""

    def __init__(self, graph: Path, threads: int | None = None, cache: bool = True) -> None:
        import openvino

        core = openvino.Core()
        if cache:  # the compiled model kept beside the graph: later processes skip reading the ONNX file and
            # compiling it (about 6 s of a cold `cragraph ask`, 0.9 s from the cache); OpenVINO keys the cache by
            # the graph, its version, the device and the settings, so a changed one is compiled anew
            core.set_property({"CACHE_DIR": str(graph.parent / OPENVINO_CACHE)})
        config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY"}  # one stream: an index build embeds batch by batch
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        try:
            self.compiled = core.compile_model(str(graph), "CPU", config)
        except RuntimeError:
            if not cache:
                raise
            core = openvino.Core()  # an unwritable or damaged cache: compile without it
            self.compiled = core.compile_model(str(graph), "CPU", config)
        self.precision = str(self.compiled.get_property("INFERENCE_PRECISION_HINT"))

    def run(self, names: Sequence[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        results = self.compiled(feeds)
        return [np.asarray(results[self.compiled.output(name)]) for name in names]

    def get_providers(self) -> list[str]:
        """What runs the graph, in ONNX Runtime's terms (reports name the runtime and its precision)."""
        return [f"OpenVINO CPU ({self.precision})"]


def open_session(graph: Path, runtime: str, threads: int | None = None, cuda: bool | None = None) -> Any:
    """An ONNX Runtime session or an OpenVINO compiled model of `graph`, either answering `run(names, feeds)`;
    BackendStartError when the runtime cannot start it (no plugin for this CPU, a damaged graph, a missing
    package ...)."""
    if runtime not in ("onnxruntime", "openvino"):
        raise ValueError(f"runtime must be onnxruntime or openvino, not {runtime!r}")
    try:
        return _start_session(graph, runtime, threads, cuda)
    except Exception as error:
        raise BackendStartError(f"{runtime} could not start on {graph.name}: "
                                f"{type(error).__name__}: {' '.join(str(error).split())[:300]}") from error


def _start_session(graph: Path, runtime: str, threads: int | None, cuda: bool | None) -> Any:
    if runtime == "openvino":
        return OpenVinoSession(graph, threads)
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    providers = ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers() and (  # torch is asked only then: 2 s import
            use_cuda() if cuda is None else cuda):
        providers.insert(0, "CUDAExecutionProvider")
    return ort.InferenceSession(str(graph), options, providers=providers)


class FolderTokenizer:
    """The rebuilt folder's word pieces (models/piece_tokenizer.py), called as a transformers tokenizer is here:
    the same input ids (tests/integration/test_onnx_embedder.py) without importing transformers."""

    def __init__(self, folder: Path, max_length: int) -> None:
        from models.piece_tokenizer import piece_tokenizer

        self.pieces = piece_tokenizer(folder)  # shared with the reader's FastTokenizer
        self.max_length = max_length
        self.pad_token_id = self.pieces.specials.pad

    def __call__(self, texts: list[str], truncation: bool, max_length: int, add_special_tokens: bool
                 ) -> dict[str, list[list[int]]]:
        if not truncation or max_length != self.max_length:
            raise ValueError(f"this tokenizer truncates at {self.max_length} tokens, not at {max_length}")
        ids = self.pieces.encode_ids(texts)
        if not add_special_tokens:
            return {"input_ids": [row[:max_length] for row in ids]}
        room = max_length - self.pieces.specials.SINGLE_EXTRA
        return {"input_ids": [self.pieces.specials.single(row[:room]) for row in ids]}


class OnnxRunner:
    """An ONNX Runtime (or OpenVINO) session plus the folder's tokenizer and word-piece table: texts in,
    L2-normalized float32 rows out."""

    def __init__(self, graph: Path, tokenizer: Any, words: np.ndarray, max_length: int, threads: int | None = None,
                 cuda: bool | None = None, runtime: str = "onnxruntime") -> None:
        if runtime not in ("onnxruntime", "openvino"):
            raise ValueError(f"runtime must be onnxruntime or openvino, not {runtime!r}")
        self.runtime = runtime
        self.graph = graph
        self.tokenizer = tokenizer
        self.words = words
        self.max_length = int(max_length)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
        self.threads = threads
        self.cuda = cuda
        self._session: Any = None
        self._lock = threading.Lock()

    @property
    def session(self) -> Any:
        """The ONNX Runtime session, started on first use: reading and compiling the graph takes seconds, which a
        process that loads the embedder only for its tokenizer or the reader's torch model should not pay. A runtime
        that cannot start raises BackendStartError (the embedder then falls back to torch unless it was asked for)."""
        with self._lock:
            if self._session is None:
                self._session = self._start()
            return self._session

    @session.setter
    def session(self, value: Any) -> None:
        self._session = value

    @property
    def providers(self) -> list[str]:
        return list(self.session.get_providers())

    def _start(self) -> Any:
        return open_session(self.graph, self.runtime, self.threads, self.cuda)

    def __repr__(self) -> str:
        return f"OnnxRunner({self.graph.name}, {self.runtime}, started={self._session is not None})"

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed texts in batches of similar token length; rows come back in the order given."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        ids = self.tokenizer(list(texts), truncation=True, max_length=self.max_length,
                             add_special_tokens=True)["input_ids"]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # longest first: the worst batch fails early
        out: np.ndarray | None = None
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = max(len(ids[i]) for i in rows)
            input_ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                input_ids[r, :len(ids[i])] = ids[i]
                mask[r, :len(ids[i])] = 1
            rows_of = np.ascontiguousarray(self.words[input_ids], dtype=np.float32)  # the graph's first step
            (vectors,) = self.session.run(["embedding"], {"inputs_embeds": rows_of, "attention_mask": mask})
            if out is None:
                out = np.empty((len(ids), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)
