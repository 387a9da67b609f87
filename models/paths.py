"""Where cragraph keeps files it builds once per user (rebuilt models, caches)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV_VAR = "CRAGRAPH_CACHE_DIR"


def cache_root() -> Path:
    """The per-user cache folder: $CRAGRAPH_CACHE_DIR when set, else the platform's user cache dir.

    Resolved on every call (not at import) so tests and users can redirect it with the env var.
    """
    override = os.environ.get(CACHE_ENV_VAR, "").strip()
    if override:
        return Path(override).expanduser().resolve()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("cragraph"))


def models_cache_dir() -> Path:
    """Folder holding model folders that cragraph builds itself (e.g. the e5-small rebuild)."""
    return cache_root() / "models"
