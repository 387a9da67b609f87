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
from collections.abc import Callable
from typing import Any

ENCODERS = ("_encode_plus", "_batch_encode_plus")
"""The methods that set the Rust object's settings and encode: transformers 5 has only the first; in 4.x batch
calls go straight to the second (and the first calls it, hence a re-entrant lock)."""

_LOCKS: weakref.WeakKeyDictionary[Any, threading.RLock] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def _lock_of(tokenizer: Any) -> threading.RLock:
    with _REGISTRY_LOCK:
        lock = _LOCKS.get(tokenizer)
        if lock is None:
            lock = _LOCKS[tokenizer] = threading.RLock()
        return lock


def _in_turn(name: str) -> Callable[..., Any]:
    """The tokenizer class's own method `name` (settings, then encoding) under the instance's lock."""

    def encode(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _lock_of(self):
            return getattr(type(self), name)(self, *args, **kwargs)

    return encode


_IN_TURN = {name: _in_turn(name) for name in ENCODERS}


def share_between_threads(tokenizer: Any) -> Any:
    """`tokenizer`, its encode calls serialized (a no-op for a tokenizer without these methods, and when already
    done). Bound per instance, so a copy of the tokenizer gets a lock of its own."""
    if tokenizer is None:
        return tokenizer
    for name, in_turn in _IN_TURN.items():
        bound = vars(tokenizer).get(name)
        if hasattr(type(tokenizer), name) and getattr(bound, "__func__", None) is not in_turn:
            setattr(tokenizer, name, types.MethodType(in_turn, tokenizer))
    return tokenizer
