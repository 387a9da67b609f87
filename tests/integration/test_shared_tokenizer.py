"""The packaged e5 tokenizer called from two threads with different padding settings, as the embedder's padded
batches and the evaluator's unpadded word pieces call it when CRAG refines and searches the web in parallel: a
fresh tokenizer hands back unpadded batches ("Unable to create tensor"), the product's shared one never does."""

from __future__ import annotations

import sys
import threading

import pytest

from models.e5_rebuild import ensure_rebuilt_e5_small
from models.embedder import load_embedder

pytestmark = pytest.mark.integration
BATCH = ["passage: " + "word " * (3 + 9 * i) for i in range(16)]


def hammer(tokenizer, rounds: int = 1500) -> list[str]:
    """Padded batches in one thread, unpadded texts in another; the errors the batches raised."""
    errors: list[str] = []

    def batches() -> None:
        for _ in range(rounds):
            try:
                tokenizer(BATCH, padding=True, truncation="longest_first", max_length=512, return_tensors="pt")
            except ValueError as error:
                errors.append(str(error))

    def pieces() -> None:
        for i in range(rounds * 2):
            tokenizer("some text " * (i % 50 + 1), add_special_tokens=False, truncation=True, max_length=512)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race needs a switch mid-call
    try:
        threads = [threading.Thread(target=batches), threading.Thread(target=pieces)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    return errors


def test_threads_sharing_the_e5_tokenizer_keep_their_own_settings():
    from transformers import AutoTokenizer

    unguarded = hammer(AutoTokenizer.from_pretrained(str(ensure_rebuilt_e5_small())))
    if not unguarded:
        pytest.skip("no thread switch fell inside a tokenizer call this time (the race depends on timing)")
    assert "Unable to create tensor" in unguarded[0]
    assert hammer(load_embedder("e5-small").model.tokenizer) == []
