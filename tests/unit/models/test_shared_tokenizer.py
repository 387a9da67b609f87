"""share_between_threads on a tiny fast tokenizer: the lock is bound per instance, added once, and changes no
output. The race itself is shown on the real e5 tokenizer (tests/integration/test_shared_tokenizer.py)."""

from __future__ import annotations

import copy
import threading

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from models.shared_tokenizer import _lock_of, share_between_threads

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


class TwoEntryTokenizer:
    """The shape of a transformers 4.x fast tokenizer: batch calls enter `_batch_encode_plus` directly, single
    calls through `_encode_plus`, which calls it."""

    def __init__(self) -> None:
        self.held: list[bool] = []

    def _encode_plus(self, text: str) -> list[str]:
        return self._batch_encode_plus([text])

    def _batch_encode_plus(self, texts: list[str]) -> list[str]:
        free: list[bool] = []  # can another thread take this tokenizer's lock now?

        def try_lock() -> None:
            lock = _lock_of(self)
            free.append(lock.acquire(blocking=False))
            if free[-1]:
                lock.release()

        probe = threading.Thread(target=try_lock)
        probe.start()
        probe.join()
        self.held.append(not free[0])
        return texts


def test_every_entry_point_that_encodes_takes_the_lock():
    tokenizer = share_between_threads(TwoEntryTokenizer())
    assert tokenizer._batch_encode_plus(["a", "b"]) == ["a", "b"]
    assert tokenizer._encode_plus("c") == ["c"]  # re-entrant: the single call holds the lock the batch takes again
    assert tokenizer.held == [True, True]
    assert TwoEntryTokenizer()._batch_encode_plus(["a"]) == ["a"]  # the class itself is untouched
