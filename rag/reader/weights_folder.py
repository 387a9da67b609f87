"""A weights folder of the reader's models: a JSON config and a numpy archive, read without pickle, every fault
reported by the model's own error naming the file at fault."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def read_folder(config_path: Path, weights_path: Path, required: Sequence[str],
                error: Callable[[Path, str], Exception]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The config (holding every `required` key) and the arrays, or `error(path, why)` raised."""
    for path in (config_path, weights_path):
        if not path.is_file():
            raise error(path, "missing")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as fault:
        raise error(config_path, f"unreadable ({fault})") from fault
    missing = [key for key in required if not isinstance(config, dict) or key not in config]
    if missing:
        raise error(config_path, f"lacks {', '.join(missing)}")
    try:
        with np.load(weights_path, allow_pickle=False) as loaded:
            arrays = {key: loaded[key] for key in loaded.files}
    except (OSError, ValueError, zipfile.BadZipFile) as fault:
        raise error(weights_path, f"damaged ({fault})") from fault
    return config, arrays
