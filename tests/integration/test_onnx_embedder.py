"""The ONNX Runtime and OpenVINO backends of the packaged e5-small against sentence-transformers fp32, the
reference: fp32 (and OpenVINO, bf16 where the CPU has it) gives the same vectors (cosine >= 0.999), int8 stays
close, order survives length sorting, and the exported graphs are cached beside the rebuilt folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.e5_rebuild import ensure_rebuilt_e5_small
from models.embedder import load_embedder
from models.onnx_embedder import FP32_FILE, INT8_FILE, ensure_onnx, onnx_folder

pytestmark = pytest.mark.integration
HOTPOT = Path(__file__).resolve().parents[3] / "shared" / "data" / "hotpotqa_migres200" / "corpus.jsonl"

MIXED = [
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
    "Лев Толстой написал роман «Война и мир» в шестидесятых годах XIX века.",
    "熊猫主要以竹子为食，生活在四川的山区。",
    "ok",
    "",
    "A long passage " + "about rivers, bridges and the towns built along them " * 60,  # truncated at 512 tokens
]


def _real_passages(n: int = 48) -> list[str]:
    if not HOTPOT.is_file():
        return MIXED
    with open(HOTPOT, encoding="utf-8") as handle:
        return [json.loads(line)["text"] for _, line in zip(range(n), handle, strict=False)] + MIXED


@pytest.fixture(scope="module")
def torch_e5():
    return load_embedder("e5-small", backend="torch")


def test_onnx_fp32_gives_the_sentence_transformers_vectors(torch_e5) -> None:
    onnx = load_embedder("e5-small", backend="onnx")
    assert onnx.backend == "onnx" and onnx.runner is not None and onnx.dim == torch_e5.dim
    passages = _real_passages()
    cos = (onnx.embed_passages(passages, batch_size=8) * torch_e5.embed_passages(passages)).sum(axis=1)
    assert cos.min() >= 0.999, cos.min()
    queries = ["who built the eiffel tower", "кто написал войну и мир", "熊猫吃什么"]
    cos_q = (onnx.embed_queries(queries) * torch_e5.embed_queries(queries)).sum(axis=1)
    assert cos_q.min() >= 0.999
    assert onnx.model is torch_e5.model  # one SentenceTransformer in the process, shared
    # each row is its own text's, whatever batch the length sort put it in
    one_by_one = np.stack([onnx.embed_passages([p])[0] for p in MIXED])
    np.testing.assert_allclose(onnx.embed_passages(MIXED, batch_size=4), one_by_one, atol=1e-4)


@pytest.mark.skipif(
    bool(os.environ.get("ONEDNN_MAX_CPU_ISA")),
    reason="OpenVINO's CPU plugin picks its kernels by the CPU and finds none for Softmax when its bundled oneDNN is "
    "capped by ONEDNN_MAX_CPU_ISA (as `ATEN_CPU_CAPABILITY=avx2 make test` caps it: tests/conftest.py)",
)
def test_openvino_gives_the_sentence_transformers_vectors(torch_e5) -> None:
    openvino = load_embedder("e5-small", backend="openvino")
    assert openvino.backend == "openvino" and openvino.runner is not None and openvino.runner.runtime == "openvino"
    passages = _real_passages()
    cos = (openvino.embed_passages(passages, batch_size=8) * torch_e5.embed_passages(passages)).sum(axis=1)
    assert cos.min() >= 0.999, (cos.min(), openvino.runner.session.precision)
    queries = ["who built the eiffel tower", "кто написал войну и мир", "熊猫吃什么"]
    assert (openvino.embed_queries(queries) * torch_e5.embed_queries(queries)).sum(axis=1).min() >= 0.999
    one_by_one = np.stack([openvino.embed_passages([p])[0] for p in MIXED])
    np.testing.assert_allclose(openvino.embed_passages(MIXED, batch_size=4), one_by_one, atol=2e-3)
    assert openvino.runner.providers == [f"OpenVINO CPU ({openvino.runner.session.precision})"]  # embed-speed reports


def test_onnx_int8_is_close_and_rows_keep_their_order(torch_e5) -> None:
    int8 = load_embedder("e5-small", backend="onnx-int8")
    passages = _real_passages(24)
    vectors = int8.embed_passages(passages, batch_size=4)
    assert vectors.dtype == np.float32 and vectors.shape == (len(passages), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    cos = (vectors * torch_e5.embed_passages(passages)).sum(axis=1)
    assert cos.min() >= 0.99, cos.min()
    # Activations are quantized per batch, so a text's int8 vector depends a little on its batch mates; each row
    # is still nearest to its own text's vector embedded alone.
    alone = np.stack([int8.embed_passages([p])[0] for p in MIXED])
    together = vectors[-len(MIXED):]
    assert ((together * alone).sum(axis=1) >= 0.99).all()
    assert ((together @ alone.T).argmax(axis=1) == np.arange(len(MIXED))).all()


def test_graphs_are_cached_beside_the_rebuild() -> None:
    rebuilt = ensure_rebuilt_e5_small()
    folder = onnx_folder(rebuilt)
    fp32, int8 = ensure_onnx(rebuilt), ensure_onnx(rebuilt, int8=True)
    assert (fp32, int8) == (folder / FP32_FILE, folder / INT8_FILE)
    assert folder.parent == rebuilt.parent
    before = fp32.stat().st_mtime_ns
    assert ensure_onnx(rebuilt) == fp32 and fp32.stat().st_mtime_ns == before  # reused, not exported again
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(f".{FP32_FILE}.building-")]


def test_folder_tokenizer_gives_the_transformers_ids(torch_e5) -> None:
    """The runner's word pieces and the SentenceTransformer's tokenizer agree, truncation at 512 included."""
    from models.onnx_embedder import FolderTokenizer

    texts = ["query: " + t for t in MIXED] + ["passage: " + t for t in _real_passages(16)] + ["  two  spaces  "]
    tokenizer = FolderTokenizer(ensure_rebuilt_e5_small(), 512)
    ours = tokenizer(texts, truncation=True, max_length=512, add_special_tokens=True)["input_ids"]
    theirs = torch_e5.model.tokenizer(texts, truncation=True, max_length=512, add_special_tokens=True)["input_ids"]
    assert ours == theirs and max(map(len, ours)) == 512


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_embedding_on_a_runner_imports_neither_transformers_nor_torch(backend) -> None:
    """A search on a runner backend embeds its query without sentence-transformers, transformers or torch (their
    imports were most of a cold `cragraph search`); reading `model` still opens the SentenceTransformer."""
    code = ("import sys\n"
            "from models.embedder import load_embedder\n"
            f"embedder = load_embedder('e5-small', backend='{backend}')\n"
            "assert embedder.embed_queries(['who built the eiffel tower']).shape == (1, 384)\n"
            "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
            "embedder.model.tokenizer\n"
            "print('sentence_transformers' in sys.modules)\n")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"], out.stdout + out.stderr


@pytest.mark.skipif(bool(os.environ.get("ONEDNN_MAX_CPU_ISA")), reason="OpenVINO cannot start under a oneDNN cap")
def test_a_bundle_built_on_torch_opens_searches_and_grows_on_the_default_backend(tmp_path, monkeypatch) -> None:
    """The default backend changed from torch to OpenVINO (issue 44): an index a user built on torch opens,
    answers the same search and takes new documents, its old torch vectors beside the new OpenVINO ones."""
    from models.onnx_embedder import BACKEND_ENV, DEFAULT_BACKEND
    from rag.retrieval.retriever import HybridRetriever
    from stores.bundle import IndexBundle, IndexSettings

    assert DEFAULT_BACKEND == "openvino"
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(MIXED[:3]):
        (docs / f"doc{i}.txt").write_text(text, encoding="utf-8")
    monkeypatch.setenv(BACKEND_ENV, "torch")
    built, _ = IndexBundle.build(tmp_path / "idx", [docs], IndexSettings(), progress=False)
    assert built.embedder.backend == "torch"
    torch_hits = [h.chunk.id for h in HybridRetriever(built).search("Which tower was finished in 1889?", k=3,
                                                                     mode="dense")]
    monkeypatch.delenv(BACKEND_ENV)
    bundle = IndexBundle.open(tmp_path / "idx")
    assert bundle.embedder.backend == "openvino"
    hits = [h.chunk.id for h in HybridRetriever(bundle).search("Which tower was finished in 1889?", k=3,
                                                                mode="dense")]
    assert hits == torch_hits and hits[0].startswith("doc0")
    (docs / "doc3.txt").write_text("The Golden Gate Bridge opened in San Francisco in 1937.", encoding="utf-8")
    bundle.add([docs], progress=False)
    grown = IndexBundle.open(tmp_path / "idx")
    assert grown.manifest["counts"]["documents"] == 4
    top = HybridRetriever(grown).search("When did the Golden Gate Bridge open?", k=1, mode="dense")[0]
    assert top.chunk.id.startswith("doc3")
