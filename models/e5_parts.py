"""The packaged e5-small's parts a question reads without torch: its tokenizer, its input word-piece table, and
whether the embedder serves it through ONNX Runtime / OpenVINO.

Why a module of its own: a query on the default backends reads e5 through exported graphs (models/onnx_embedder.py,
the reader's rag/reader/graph.py), so importing torch (seconds of a cold ask) for a tokenizer and a table would be
waste; models/e5_torch.py builds the torch model on these parts when torch is chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.word_table import word_table


class Encoded(dict):
    """What a transformers tokenizer call returns, for the keys read here: input_ids, attention_mask,
    offset_mapping (when asked), and sequence_ids()."""

    def __init__(self, ids: list[int], sequence_ids: list[int | None],
                 offsets: list[tuple[int, int]] | None = None) -> None:
        super().__init__(input_ids=ids, attention_mask=[1] * len(ids))
        if offsets is not None:
            self["offset_mapping"] = offsets
        self._sequence_ids = sequence_ids

    def sequence_ids(self) -> list[int | None]:
        return self._sequence_ids


class FastTokenizer:
    """The folder's word pieces (models/piece_tokenizer.py), answering the calls the reader and the embedded
    evaluator make of a transformers fast tokenizer with the same ids, offsets and sequence ids
    (tests/integration/test_e5_torch.py checks them against transformers'): a single text or a pair, special
    tokens or not, truncation of the text (True) or of the pair's second text ("only_second") to max_length,
    tokenize, and the special / unknown token ids. Importing transformers for this cost most of a second of a
    cold ask, and its tokenizer's trie most of a second more and hundreds of MB."""

    def __init__(self, folder: Path) -> None:
        from models.piece_tokenizer import piece_tokenizer

        self.pieces = piece_tokenizer(folder)  # the embedder's own: one per folder and process
        self.specials = self.pieces.specials
        self.all_special_ids = sorted(set(self.specials.literals.values()))
        self.unk_token_id = self.specials.unk
        self.pad_token_id = self.specials.pad

    def __call__(self, text: str, text_pair: str | None = None, *, add_special_tokens: bool = True,
                 truncation: bool | str = False, max_length: int | None = None,
                 return_offsets_mapping: bool = False) -> Encoded:
        if truncation and max_length is None:
            raise ValueError("truncation needs max_length")
        limit = int(max_length or 0)
        first = self.pieces.encode(text)
        ids, offsets = first.ids, first.offsets
        if not text_pair:  # transformers reads an empty second text as none
            if truncation:
                room = max(limit - (self.specials.SINGLE_EXTRA if add_special_tokens else 0), 0)
                ids, offsets = ids[:room], offsets[:room]
            sequence: list[int | None] = [0] * len(ids)
            if add_special_tokens:
                ids, offsets, sequence = self.specials.single(ids), [(0, 0), *offsets, (0, 0)], [None, *sequence, None]
            return Encoded(ids, sequence, offsets if return_offsets_mapping else None)
        if truncation not in (False, "only_second"):
            raise ValueError("a pair is truncated only_second here")
        second = self.pieces.encode(text_pair)
        more, more_offsets = second.ids, second.offsets
        if truncation:
            room = limit - len(ids) - (self.specials.PAIR_EXTRA if add_special_tokens else 0)
            if room <= 0:
                raise ValueError(f"the first text ({len(ids)} tokens) leaves no room within {max_length}")
            more, more_offsets = more[:room], more_offsets[:room]
        if add_special_tokens:
            joined = self.specials.pair(ids, more)
            joined_offsets = [(0, 0), *offsets, (0, 0), (0, 0), *more_offsets, (0, 0)]
            sequence = [None, *[0] * len(ids), None, None, *[1] * len(more), None]
        else:
            joined, joined_offsets = ids + more, offsets + more_offsets
            sequence = [*[0] * len(ids), *[1] * len(more)]
        return Encoded(joined, sequence, joined_offsets if return_offsets_mapping else None)

    def tokenize(self, text: str) -> list[str]:
        return [piece or "" for piece in self.pieces.pieces_of(self.pieces.encode(text).ids)]

    def convert_tokens_to_ids(self, token: str) -> int | None:
        found = self.pieces.piece_to_id(token)
        return self.unk_token_id if found is None else found

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str | None]:
        return self.pieces.pieces_of(ids)


def load_tokenizer(folder: Path) -> FastTokenizer:
    """The folder's tokenizer, as the reader and the evaluator call it."""
    return FastTokenizer(folder)


def e5_pieces() -> tuple[Any, Any]:
    """The tokenizer and input word-piece table (fp32 numpy) the embedded evaluator reads, without building a
    model for them: the open sentence-transformers model's when there is one, else the folder's tokenizer and the
    table memory-mapped from its file. Both give the same numbers."""
    from models.e5_rebuild import ensure_rebuilt_e5_small

    if sentence_transformers_open():
        from models import embedder as embedders

        model: Any = embedders.load_embedder(embedders.E5_SMALL, backend=embedders.TORCH).model
        return model.tokenizer, model[0].auto_model.embeddings.word_embeddings.weight.detach().float().numpy()
    folder = ensure_rebuilt_e5_small()
    return load_tokenizer(folder), word_table(folder)


def sentence_transformers_open() -> bool:
    from models import embedder as embedders

    return (embedders.E5_SMALL, False, embedders.TORCH) in embedders._cache


def serves_light(embedder: Any) -> bool:
    """Whether `embedder` is the packaged e5-small served by ONNX Runtime or OpenVINO: then its torch model is not
    open, and the evaluator reads the folder's tokenizer and table, the torch reader the plain-torch e5 of
    models/e5_torch.py, instead of opening it (the same states; tests/integration/test_e5_torch.py). A torch-served
    embedder has its model open already: they read that."""
    from models.embedder import E5_SMALL

    return getattr(embedder, "name", None) == E5_SMALL and getattr(embedder, "runner", None) is not None
