"""Test-wide settings: offline, one thread, a cache folder of the checkout's own, and a tiny real embedder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Models rebuilt and embeddings cached by the tests stay in the checkout, not in the user's cache.
os.environ.setdefault("CRAGRAPH_CACHE_DIR", str(ROOT / ".cragraph" / "test-cache"))
# `ATEN_CPU_CAPABILITY=avx2 make test` runs the suite as an AVX2-only CPU would (issue 42). ATen's own kernels
# follow that variable, but the reader's answers are decided by oneDNN's and MKL's, which pick theirs from the CPU:
# on an AVX-512 machine only ONEDNN_MAX_CPU_ISA=AVX2 reproduces an AMD EPYC's answers. Both libraries read their
# variable on first use, after this line; one set by hand wins.
_KERNELS = {"avx2": ("AVX2", "AVX2"), "default": ("SSE41", "SSE4_2")}  # capability -> (oneDNN, MKL) ceiling
if os.environ.get("ATEN_CPU_CAPABILITY", "").lower() in _KERNELS:
    _onednn, _mkl = _KERNELS[os.environ["ATEN_CPU_CAPABILITY"].lower()]
    os.environ.setdefault("ONEDNN_MAX_CPU_ISA", _onednn)
    os.environ.setdefault("MKL_ENABLE_INSTRUCTIONS", _mkl)


def data_dir(name: str) -> Path:
    """A folder of ../shared/data, or skip the test when the checkout has no data beside it."""
    folder = DATA / name
    if not folder.exists():
        pytest.skip(f"benchmark data {folder} is not present (it sits beside the repo in development)")
    return folder


_TEXT = """
the river flows through the city and the bridge crosses the river near the old harbour
a scientist founded an institute in the capital where physics and chemistry were studied
река течёт через город мост пересекает реку учёный основал институт в столице
河流 穿过 城市 桥 横跨 河 科学家 在 首都 创办 研究所
"""


@pytest.fixture(scope="session")
def tiny_embedder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real, tiny sentence-transformers model (random BERT, WordPiece vocabulary) saved to disk.

    It runs the real loading, pooling and normalizing code paths in milliseconds; its vectors carry no meaning.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as st_models
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    base = tmp_path_factory.mktemp("tiny-bert")
    # A fixed vocabulary (not a trained one: trainer tie-breaks vary between runs, and so would the vectors).
    words = sorted({*_TEXT.split(), *_TEXT.replace(" ", "").replace("\n", "")})
    vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words])}
    tokenizer = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                   model_max_length=128)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=fast.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(base / "hf")
    fast.save_pretrained(base / "hf")
    word = st_models.Transformer(str(base / "hf"), max_seq_length=128)
    pooling = st_models.Pooling(word.get_embedding_dimension(), "mean")
    folder = base / "st"
    SentenceTransformer(modules=[word, pooling, st_models.Normalize()]).save(str(folder))
    return folder


@pytest.fixture(autouse=True)
def _operator_defaults():
    """Each test starts from the operator configuration its environment gives: a change a test made
    (use_operator, an environment variable a command read) ends with it."""
    from rag import config

    config._override.clear()
    config.loaded.cache_clear()
    yield
    config._override.clear()
    config.loaded.cache_clear()
