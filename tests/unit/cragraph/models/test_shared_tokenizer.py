"""share_between_threads on a tiny fast tokenizer: the lock is bound per instance, added once, and changes no
output. The race itself is shown on the real e5 tokenizer (tests/integration/test_shared_tokenizer.py)."""

from __future__ import annotations

import copy

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from cragraph.models.shared_tokenizer import share_between_threads

WORDS = ["[UNK]", "[PAD]", "word", "some", "text"]


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]")


def test_the_lock_is_per_instance_added_once_and_changes_no_output():
    plain = tiny_tokenizer()
    tokenizer = share_between_threads(tiny_tokenizer())
    bound = tokenizer._encode_plus
    assert share_between_threads(tokenizer)._encode_plus == bound  # not wrapped twice
    copied = copy.deepcopy(tokenizer)
    assert copied._encode_plus.__self__ is copied and tokenizer._encode_plus.__self__ is tokenizer
    batch = ["word", "some text word"]
    expected = plain(batch, padding=True)["input_ids"]
    assert tokenizer(batch, padding=True)["input_ids"] == copied(batch, padding=True)["input_ids"] == expected
    assert share_between_threads(None) is None
