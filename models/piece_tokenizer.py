"""e5-small's word pieces through sentencepiece: the ids and offsets the folder's tokenizer.json gives through the
`tokenizers` library, from a trie a fraction of the size that is built in a fraction of the time.

Why: `tokenizers` builds its Unigram model of 250k pieces into a hash-map trie that takes most of a second to read
and hundreds of MB to hold, the largest single cost of a cold ask; sentencepiece (the library the pieces were
trained with) holds the same pieces in a double-array trie. The tokenizer.json is written once as a sentencepiece
model beside it (`ensure_piece_model`). It must have e5's (XLM-R's) shape: a Unigram model, the precompiled
normalizer, words split at whitespace with "▁" prepended, `<s> A </s>` / `<s> A </s></s> B </s>` around the texts;
another shape is refused. The steps follow `tokenizers` exactly (tests/unit/models/test_piece_tokenizer.py holds
the two side by side): special-token literals are cut out of the text first; each remaining segment is
normalized (keeping each normalized character's place in the original); each word is segmented on its own (a
whole-text lattice breaks ties between equal-scoring splits differently); a piece's offsets are the original
characters its normalized characters came from, the "▁" counted as its word's first character.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PIECE_FOLDER = "sentencepiece"
"""The folder written beside tokenizer.json: the model (MODEL_FILE) and its special tokens (SPECIALS_FILE), read
without parsing the large tokenizer.json again."""
MODEL_FILE, SPECIALS_FILE = "pieces.model", "specials.json"

SPACE = "\u2581"
WHITE_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                        "\u2028\u2029\u202f\u205f\u3000")
"""Unicode's White_Space characters: `tokenizers` splits words at them after normalizing, where the normalizer
leaves one (NEL) standing."""
_CUT = re.compile("[" + re.escape(SPACE + "".join(sorted(WHITE_SPACE))) + "]")
_NORMAL, _UNKNOWN, _USER_DEFINED = 1, 2, 4  # sentencepiece's piece types (sentencepiece_model.proto)


@dataclass(frozen=True)
class Specials:
    """The special tokens the texts are wrapped in, read from the tokenizer.json's template."""

    bos: int
    eos: int
    pad: int
    unk: int
    literals: dict[str, int]  # every added special token, as text may hold it literally

    def single(self, ids: list[int]) -> list[int]:
        return [self.bos, *ids, self.eos]

    def pair(self, first: list[int], second: list[int]) -> list[int]:
        return [self.bos, *first, self.eos, self.eos, *second, self.eos]

    SINGLE_EXTRA = 2
    PAIR_EXTRA = 4


# --- writing the model -------------------------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _number(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(value)) + value


def _float(field: int, value: float) -> bytes:
    return _varint(field << 3 | 5) + struct.pack("<f", value)


def _normalizer_spec(charsmap: bytes, normalize: bool) -> bytes:
    """NormalizerSpec: name 1, precompiled_charsmap 2, add_dummy_prefix 3, remove_extra_whitespaces 4,
    escape_whitespaces 5. Without `normalize`, text passes through unchanged (it is normalized already)."""
    return (_bytes(1, b"nmt_nfkc" if normalize else b"identity") + _bytes(2, charsmap if normalize else b"")
            + _number(3, int(normalize)) + _number(4, int(normalize)) + _number(5, 1))


_IDENTITY = _bytes(3, _normalizer_spec(b"", normalize=False))
"""Appended to the model for segmenting normalized words: a repeated message field merges, the later values win."""


def _refuse(path: Path, what: str) -> ValueError:
    return ValueError(f"{path} is not an e5 (XLM-R) style tokenizer: {what}; only that shape is read through "
                      "sentencepiece")


def read_specials(path: Path, spec: dict[str, Any]) -> Specials:
    """The template's tokens, checked against the one `Specials` writes."""
    post = spec.get("post_processor") or {}
    ids = {name: entry["ids"][0] for name, entry in (post.get("special_tokens") or {}).items()}

    def template(kind: str) -> list[str]:
        return [next(iter(step)) == "SpecialToken" and step["SpecialToken"]["id"] or step["Sequence"]["id"]
                for step in post.get(kind, [])]

    if post.get("type") != "TemplateProcessing" or template("single") != ["<s>", "A", "</s>"] or \
            template("pair") != ["<s>", "A", "</s>", "</s>", "B", "</s>"]:
        raise _refuse(path, "its template is not <s> A </s> / <s> A </s></s> B </s>")
    vocab = [piece for piece, _ in spec["model"]["vocab"]]
    literals = {token["content"]: token["id"] for token in spec.get("added_tokens", []) if token.get("special")}
    return Specials(bos=ids["<s>"], eos=ids["</s>"], pad=vocab.index("<pad>") if "<pad>" in vocab else ids["</s>"],
                    unk=int(spec["model"]["unk_id"]), literals=literals)


def write_piece_model(tokenizer_json: Path, out: Path) -> None:
    """Write tokenizer.json's Unigram pieces, scores and normalizer into the folder `out` as a sentencepiece model
    (a protobuf written field by field: sentencepiece's own generated module needs a newer protobuf than the graph
    tools pin), and its special tokens beside it."""
    spec = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    model, normalizer = spec.get("model") or {}, spec.get("normalizer") or {}
    if model.get("type") != "Unigram" or model.get("byte_fallback"):
        raise _refuse(tokenizer_json, "its model is not a Unigram model without byte fallback")
    if normalizer.get("type") != "Precompiled":
        raise _refuse(tokenizer_json, "its normalizer is not a precompiled charsmap")
    steps = (spec.get("pre_tokenizer") or {}).get("pretokenizers", [])
    if [step.get("type") for step in steps] != ["WhitespaceSplit", "Metaspace"] or \
            steps[1].get("replacement") != SPACE or steps[1].get("prepend_scheme") != "always":
        raise _refuse(tokenizer_json, "its words are not split at whitespace with '▁' prepended")
    specials = read_specials(tokenizer_json, spec)
    unk = int(model["unk_id"])
    pieces = []
    for index, (piece, score) in enumerate(model["vocab"]):
        kind = _UNKNOWN if index == unk else _USER_DEFINED if piece in specials.literals else _NORMAL
        pieces.append(_bytes(1, _bytes(1, piece.encode()) + _float(2, float(score)) + _number(3, kind)))
    # TrainerSpec: model_type 3 (UNIGRAM 1), vocab_size 4, unk_id 40, bos_id / eos_id / pad_id 41-43 (-1: none;
    # the special tokens are user-defined pieces here, added by Specials as tokenizers' template adds them)
    none = (1 << 64) - 1
    trainer = (_number(3, 1) + _number(4, len(pieces)) + _number(40, unk) + _number(41, none) + _number(42, none)
               + _number(43, none) + _bytes(45, model["vocab"][unk][0].encode()))
    charsmap = base64.b64decode(normalizer["precompiled_charsmap"])
    out.mkdir()
    (out / MODEL_FILE).write_bytes(b"".join(pieces) + _bytes(2, trainer)
                                   + _bytes(3, _normalizer_spec(charsmap, normalize=True)))
    (out / SPECIALS_FILE).write_text(json.dumps(asdict(specials), ensure_ascii=False), encoding="utf-8")


def ensure_piece_model(folder: Path) -> Path:
    """The sentencepiece folder beside `folder`/tokenizer.json, written on first use."""
    from models.paths import build_atomically

    path = folder / PIECE_FOLDER
    if not (path / SPECIALS_FILE).is_file():
        build_atomically(path, lambda staging: write_piece_model(folder / "tokenizer.json", staging))
    return path


# --- reading it --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pieces:
    """A text's piece ids and, per piece, the (start, end) characters of the original text it covers."""

    ids: list[int]
    offsets: list[tuple[int, int]]


class PieceTokenizer:
    """A tokenizer.json's pieces through sentencepiece (see the module docstring). Its calls are thread-safe."""

    def __init__(self, folder: Path) -> None:
        try:
            import sentencepiece
        except ImportError as error:
            raise FileNotFoundError("package 'sentencepiece' is not installed (pip install 'sentencepiece>=0.2'); "
                                    "e5-small's word pieces are read with it") from error

        written = ensure_piece_model(folder)
        proto = (written / MODEL_FILE).read_bytes()
        self.specials = Specials(**json.loads((written / SPECIALS_FILE).read_text(encoding="utf-8")))
        self._normalizer = sentencepiece.SentencePieceNormalizer(model_proto=proto)
        self._segmenter = sentencepiece.SentencePieceProcessor(model_proto=proto + _IDENTITY)
        literals = sorted(self.specials.literals, key=len, reverse=True)
        self._literal = re.compile("|".join(map(re.escape, literals))) if literals else None
        self._lengths: dict[int, int] = {}  # a piece's length in characters, as met

    def __len__(self) -> int:
        return int(self._segmenter.get_piece_size())

    def piece_to_id(self, piece: str) -> int | None:
        if piece in self.specials.literals:
            return self.specials.literals[piece]
        found = int(self._segmenter.piece_to_id(piece))
        return None if found == self.specials.unk and piece != self.id_to_piece(found) else found

    def id_to_piece(self, index: int) -> str:
        return str(self._segmenter.id_to_piece(int(index)))

    def pieces_of(self, ids: list[int]) -> list[str | None]:
        """The pieces of ids; None for an id past the vocabulary (a model's table may have spare rows)."""
        size = len(self)
        known = [int(i) for i in ids if 0 <= int(i) < size]
        found = iter(self._segmenter.id_to_piece(known) if known else [])
        return [next(found) if 0 <= int(i) < size else None for i in ids]

    def encode(self, text: str) -> Pieces:
        """The pieces of one text, with their offsets."""
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        for start, segment, literal in self._segments(text):
            if literal is not None:
                ids.append(literal)
                offsets.append((start, start + len(segment)))
                continue
            words, starts = self._words(segment)
            rows = [self._segmenter.encode(word) for word, _ in words]  # one call a word: batches start threads
            for (word, at), row in zip(words, rows, strict=True):
                for piece, a, b in self._spans(word, row):
                    if word[a] == SPACE:  # the prepended "▁" stands where its word's first character does
                        a = a + 1 if a + 1 < len(word) else a
                        b = max(b, a + 1)
                    ids.append(piece)
                    offsets.append((start + starts[at + a], start + starts[at + b - 1] + 1))
        return Pieces(ids, offsets)

    def _spans(self, word: str, row: list[int]) -> list[tuple[int, int, int]]:
        """(id, start, end) of a word's pieces, in the word's characters: the pieces spell the word, so their
        lengths place them; an unknown run's length is read from sentencepiece's own spans."""
        if self.specials.unk in row:
            return [(int(p.id), _chars(word, p.begin), _chars(word, p.end))
                    for p in self._segmenter.encode(word, return_type="proto").pieces]
        spans, at = [], 0
        for piece in row:
            length = self._lengths.get(piece)
            if length is None:
                length = self._lengths[piece] = len(self.id_to_piece(piece))
            spans.append((piece, at, at + length))
            at += length
        return spans

    def encode_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The piece ids of many texts, their words segmented in one call."""
        words: list[str] = []
        plans: list[list[int | range]] = []  # per text: a literal's id, or the range of its words in `words`
        for text in texts:
            plan: list[int | range] = []
            for _, segment, literal in self._segments(text):
                if literal is not None:
                    plan.append(literal)
                    continue
                found = [word for word, _ in self._words(segment)[0]]
                plan.append(range(len(words), len(words) + len(found)))
                words += found
            plans.append(plan)
        segmented = self._segmenter.encode(words) if words else []
        rows = []
        for plan in plans:
            row: list[int] = []
            for step in plan:
                if isinstance(step, int):
                    row.append(step)
                else:
                    for word in step:
                        row += segmented[word]
            rows.append(row)
        return rows

    def _segments(self, text: str) -> list[tuple[int, str, int | None]]:
        """The text cut at special-token literals: (start, text, the literal's id or None)."""
        if self._literal is None:
            return [(0, text, None)] if text else []
        out: list[tuple[int, str, int | None]] = []
        at = 0
        for found in self._literal.finditer(text):
            if found.start() > at:
                out.append((at, text[at:found.start()], None))
            out.append((found.start(), found.group(), self.specials.literals[found.group()]))
            at = found.end()
        if at < len(text):
            out.append((at, text[at:], None))
        return out

    def _words(self, text: str) -> tuple[list[tuple[str, int]], list[int]]:
        """The normalized text's words, each with "▁" first and its place in the normalized text, and where
        each normalized character's original character starts (a character normalized into several, like "℃"
        into "°C", stands for each of them; one composed of several stands where the first of them does)."""
        normalized, starts = self._normalizer.normalize(text, with_offsets=True)
        cut = [found.start() for found in _CUT.finditer(normalized)] + [len(normalized)]
        words = [(SPACE + normalized[a + 1:b], a) for a, b in zip(cut, cut[1:], strict=False) if b - a > 1]
        return words, starts


def _chars(word: str, byte: int) -> int:
    """The character index of a UTF-8 byte offset within `word`."""
    return byte if word.isascii() else len(word.encode()[:byte].decode(errors="ignore"))


_LOADED: dict[Path, PieceTokenizer] = {}
_LOADED_LOCK = threading.Lock()


def piece_tokenizer(folder: Path) -> PieceTokenizer:
    """The folder's PieceTokenizer, read once per process (the embedder, the reader and the evaluator share it)."""
    key = Path(folder).resolve()
    with _LOADED_LOCK:
        if key not in _LOADED:
            _LOADED[key] = PieceTokenizer(key)
        return _LOADED[key]
