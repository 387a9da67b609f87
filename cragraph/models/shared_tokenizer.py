"""One tokenizer safely shared by threads: its encode calls take turns.

A Hugging Face fast tokenizer keeps its truncation and padding settings on the Rust object it wraps, and every
call first sets them and then encodes. The packaged e5-small's tokenizer is shared by the embedder (batches
padded to the longest), the embedded evaluator's word pieces (no padding) and the reader (one truncated pair);
when two threads call it at once (CRAG's `ambiguous` branch refines and searches the web in parallel; a server
runs requests in parallel) one call can encode with the other's settings, and a batch comes back unpadded:
"ValueError: Unable to create tensor ...". Fixed upstream only by a lock (transformers issue 47085); this is
that lock, put on the instances this project shares.
"""

from __future__ import annotations

import threading
import types
import weakref
from typing import Any

_LOCKS: weakref.WeakKeyDictionary[Any, threading.RLock] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def _lock_of(tokenizer: Any) -> threading.RLock:
    with _REGISTRY_LOCK:
        lock = _LOCKS.get(tokenizer)
        if lock is None:
            lock = _LOCKS[tokenizer] = threading.RLock()
        return lock


def _encode_in_turn(self: Any, *args: Any, **kwargs: Any) -> Any:
    """The tokenizer class's own `_encode_plus` (settings, then encoding) under the instance's lock."""
    with _lock_of(self):
        return type(self)._encode_plus(self, *args, **kwargs)


def share_between_threads(tokenizer: Any) -> Any:
    """`tokenizer`, its encode calls serialized (a no-op for a tokenizer without `_encode_plus`, and when
    already done). Bound per instance, so a copy of the tokenizer gets a lock of its own."""
    if tokenizer is not None and hasattr(type(tokenizer), "_encode_plus"):
        current = vars(tokenizer).get("_encode_plus")
        if getattr(current, "__func__", None) is not _encode_in_turn:
            tokenizer._encode_plus = types.MethodType(_encode_in_turn, tokenizer)
    return tokenizer
