"""The reader's backend is chosen in one place: the argument, else CRAGRAPH_READER_BACKEND, else openvino; an
unknown name is refused with the names there are."""

from __future__ import annotations

import pytest

from rag.reader.graph import BACKEND_ENV, reader_backend


def test_the_argument_then_the_environment_then_openvino(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    assert reader_backend() == "openvino"
    monkeypatch.setenv(BACKEND_ENV, " Torch ")
    assert reader_backend() == "torch"
    assert reader_backend("onnx") == "onnx"


def test_an_unknown_backend_is_refused_with_the_names(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tensorrt")
    with pytest.raises(ValueError, match="unknown reader backend 'tensorrt'.*torch, openvino, onnx"):
        reader_backend()
