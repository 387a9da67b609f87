"""The reader's exported graph (rag/reader/graph.py): the torch module it was exported from gives the same logits
on both runtimes, the reader reads through it on the openvino backend, and a graph that cannot start leaves the
reader on torch with a warning, never without a reader; the torch reader reads the same fp32 bottom as the graph."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rag.reader.reader import DEFAULT_WEIGHTS, WEIGHTS_FILE, Reader, read_weights
from rag.reader.types import Passage

pytestmark = pytest.mark.integration
QUESTION = "Who founded the Radium Institute?"
PASSAGES = [Passage("The Radium Institute in Warsaw was founded by Marie Curie in 1932, with her sister's help.",
                    "Radium Institute")]


@pytest.fixture(scope="module")
def exported():
    from models.e5_rebuild import ensure_rebuilt_e5_small
    from models.e5_torch import load_bert
    from rag.reader.encoder import load_head
    from rag.reader.export import ReaderGraph
    from rag.reader.graph import ensure_graph

    config, arrays = read_weights(DEFAULT_WEIGHTS)
    bert = load_bert(ensure_rebuilt_e5_small(), config["split"])
    module = ReaderGraph(bert, load_head(arrays, config["split"], bert.config, DEFAULT_WEIGHTS / WEIGHTS_FILE)).eval()
    return config, arrays, module, ensure_graph(DEFAULT_WEIGHTS, config, arrays)


@pytest.mark.parametrize("runtime", ["openvino", "onnxruntime"])
def test_the_graph_gives_the_logits_of_the_module_it_was_exported_from(exported, runtime):
    from models.e5_rebuild import ensure_rebuilt_e5_small
    from models.word_table import word_table
    from rag.reader.graph import GraphSpans

    config, arrays, module, _ = exported
    spans = GraphSpans.open(DEFAULT_WEIGHTS, config, arrays, runtime)
    ids = np.array([0, 4865, 86531, 70, 3, 2, 581, 1672, 2], dtype=np.int64)
    start, end = spans(ids)
    rows = torch.from_numpy(np.ascontiguousarray(word_table(ensure_rebuilt_e5_small())[ids[None]]))
    with torch.no_grad():
        expected = [t[0].numpy() for t in module(rows)]
    precision = str(getattr(spans.session, "precision", "f32"))
    tolerance = 0.15 if "bf16" in precision or "bfloat16" in precision else 1e-3  # OpenVINO's bf16 on CPUs with it
    assert start.shape == end.shape == ids.shape
    assert np.abs(start - expected[0]).max() < tolerance and np.abs(end - expected[1]).max() < tolerance


def test_the_openvino_reader_reads_through_the_graph_and_agrees_with_torch_here():
    from rag.reader.graph import GraphSpans

    graph_reader, torch_reader = Reader.load(DEFAULT_WEIGHTS, backend="openvino"), Reader.load(DEFAULT_WEIGHTS)
    assert isinstance(graph_reader.spans_of, GraphSpans)
    answers = [reader.read(QUESTION, PASSAGES, "en") for reader in (graph_reader, torch_reader)]
    assert [a.text for a in answers if a is not None] == ["Marie Curie", "Marie Curie"]


def test_a_graph_that_cannot_start_leaves_the_reader_on_torch(tmp_path, monkeypatch):
    import rag.reader.graph as graph
    from rag.reader.encoder import TorchSpans

    damaged = tmp_path / "reader.onnx"
    damaged.write_bytes(b"not a graph")
    monkeypatch.setattr(graph, "ensure_graph", lambda weights, config, arrays: damaged)
    with pytest.warns(RuntimeWarning, match="openvino could not start on reader.onnx"):
        reader = Reader.load(DEFAULT_WEIGHTS, backend="openvino")
    assert isinstance(reader.spans_of, TorchSpans)
    answer = reader.read(QUESTION, PASSAGES, "en")
    assert answer is not None and answer.text == "Marie Curie"


def test_the_torch_reader_runs_the_graphs_fp32_bottom():
    # an int8 bottom (the torch reader's before da33669) moves these logits by up to 0.4 from the graph's
    onnx, on_torch = Reader.load(DEFAULT_WEIGHTS, backend="onnx"), Reader.load(DEFAULT_WEIGHTS, backend="torch")
    scored = [reader.score(QUESTION, PASSAGES, "en") for reader in (onnx, on_torch)]
    assert (scored[0].encoded.input_ids == scored[1].encoded.input_ids).all()
    assert np.abs(scored[0].start - scored[1].start).max() < 1e-2
    assert np.abs(scored[0].end - scored[1].end).max() < 1e-2
