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
    offset_mapping, and sequence_ids()."""

    def __init__(self, encoding: Any, offsets: bool, first_length: int | None = None) -> None:
        super().__init__(input_ids=list(encoding.ids), attention_mask=list(encoding.attention_mask))
        if offsets:
            self["offset_mapping"] = [tuple(o) for o in encoding.offsets]
        if first_length is None:
            self._sequence_ids: list[int | None] = list(encoding.sequence_ids)
        else:  # a pair joined by post_process: the texts' tokens in order, the template's special tokens between
            self._sequence_ids, seen = [], 0
            for special in encoding.special_tokens_mask:
                self._sequence_ids.append(None if special else (0 if seen < first_length else 1))
                seen += not special

    def sequence_ids(self) -> list[int | None]:
        return self._sequence_ids


class FastTokenizer:
    """The folder's tokenizer.json through the `tokenizers` library, answering the calls the reader and the
    embedded evaluator make of a transformers fast tokenizer with the same ids, offsets and sequence ids
    (tests/integration/test_e5_torch.py checks them against transformers'): a single text or a pair, special
    tokens or not, truncation of the text (True) or of the pair's second text ("only_second") to max_length,
    tokenize, and the special / unknown token ids. Truncation is done per call on the encoding, never set on the
    shared backend, so threads may share one instance. Importing transformers for this cost 0.7 s of a cold ask."""

    def __init__(self, path: Path) -> None:
        from models.shared_tokenizer import tokenizer_file

        self.backend = tokenizer_file(path)  # the embedder's own, when it reads the same file
        special = {i: t for i, t in self.backend.get_added_tokens_decoder().items() if t.special}
        self.all_special_ids = sorted(special)
        unk = self.backend.token_to_id("<unk>")
        self.unk_token_id = None if unk is None else int(unk)
        pad = self.backend.token_to_id("<pad>")
        self.pad_token_id = None if pad is None else int(pad)

    def __call__(self, text: str, text_pair: str | None = None, *, add_special_tokens: bool = True,
                 truncation: bool | str = False, max_length: int | None = None,
                 return_offsets_mapping: bool = False) -> Encoded:
        if truncation and max_length is None:
            raise ValueError("truncation needs max_length")
        limit = int(max_length or 0)
        if not text_pair:  # transformers reads an empty second text as none
            encoding = self.backend.encode(text, add_special_tokens=False)
            if truncation:
                encoding.truncate(limit - (self.backend.num_special_tokens_to_add(False)
                                                if add_special_tokens else 0))
            if add_special_tokens:
                encoding = self.backend.post_process(encoding, None, True)
            return Encoded(encoding, return_offsets_mapping)
        if truncation not in (False, "only_second"):
            raise ValueError("a pair is truncated only_second here")
        first = self.backend.encode(text, add_special_tokens=False)
        second = self.backend.encode(text_pair, add_special_tokens=False)
        if truncation:
            room = limit - len(first.ids) - (self.backend.num_special_tokens_to_add(True)
                                             if add_special_tokens else 0)
            if room <= 0:
                raise ValueError(f"the first text ({len(first.ids)} tokens) leaves no room within {max_length}")
            second.truncate(room)
        return Encoded(self.backend.post_process(first, second, add_special_tokens), return_offsets_mapping,
                       first_length=len(first.ids))

    def tokenize(self, text: str) -> list[str]:
        return list(self.backend.encode(text, add_special_tokens=False).tokens)

    def convert_tokens_to_ids(self, token: str) -> int | None:
        found = self.backend.token_to_id(token)
        return self.unk_token_id if found is None else int(found)

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str | None]:
        return [self.backend.id_to_token(i) for i in ids]


def load_tokenizer(folder: Path) -> FastTokenizer:
    """The folder's tokenizer (tokenizer.json), as the reader and the evaluator call it."""
    return FastTokenizer(folder / "tokenizer.json")


def e5_pieces() -> tuple[Any, Any]:
    """The tokenizer and input word-piece table (fp32 numpy) the embedded evaluator reads, without building a
    model for them: the open sentence-transformers model's when there is one, else the folder's tokenizer and the
    table memory-mapped from its file. Quantization leaves the table fp32, so both give the same numbers."""
    from models.e5_rebuild import ensure_rebuilt_e5_small

    if sentence_transformers_open():
        from models import embedder as embedders

        model: Any = embedders.load_embedder(embedders.E5_SMALL, quantize=True).model
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
