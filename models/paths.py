"""Where cragraph keeps files it builds once per user (rebuilt models, caches)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
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


def build_atomically(final: Path, build: Callable[[Path], object]) -> None:
    """Run `build(path)` into a staging folder beside `final`, then rename it into place: a reader never sees a
    half-written file, and a failed build leaves nothing."""
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.building-", dir=final.parent))
    try:
        build(staging / final.name)
        os.replace(staging / final.name, final)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)
