"""transformers' "Loading weights" bar off: it is drawn on every model load (on stderr of every `cragraph ask`)
and says nothing a person can act on, since a load takes a second or less. Every other bar stays: downloads of
hub models, and cragraph's own progress for long work such as indexing."""

from __future__ import annotations

from typing import Any

WEIGHTS_BAR = "Loading weights"


def quiet_weight_loading() -> None:
    """Route transformers' bars through a hook that turns off the weight-loading one (idempotent)."""
    from transformers.utils import logging as hf_logging

    install = getattr(hf_logging, "set_tqdm_hook", None)
    if install is not None:  # transformers before 5 draws no per-load bar, and has no hook
        install(_without_weights_bar)


def _without_weights_bar(factory: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if kwargs.get("desc") == WEIGHTS_BAR:
        kwargs = {**kwargs, "disable": True}
    return factory(*args, **kwargs)
