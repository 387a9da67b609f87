"""Opening a model draws no "Loading weights" bar on stderr; other transformers bars still draw."""

from __future__ import annotations

from models.embedder import open_embedder
from models.loading import WEIGHTS_BAR, quiet_weight_loading


def test_opening_an_embedder_draws_no_weights_bar(tiny_embedder_dir, capfd) -> None:
    open_embedder(str(tiny_embedder_dir))
    assert WEIGHTS_BAR not in capfd.readouterr().err


def test_only_the_weights_bar_is_off() -> None:
    from transformers.utils import logging as hf_logging

    quiet_weight_loading()
    weights = hf_logging.tqdm(range(3), desc=WEIGHTS_BAR)
    download = hf_logging.tqdm(range(3), desc="Downloading")
    try:
        assert weights.disable and not download.disable
    finally:
        weights.close()
        download.close()
