"""Reaching Milvus: a `FILE.db` URI runs Milvus Lite in this process, `http(s)://host:port` talks to a server.

Both go through pymilvus' MilvusClient, so the code above this module is the same for either. An unreachable
server is a MilvusError naming the URI before anything is read or written locally.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stores.bundle import BundleError

REMOTE_SCHEMES = ("http://", "https://", "tcp://", "grpc://")
CONNECT_TIMEOUT_SECONDS = 10.0


class MilvusError(BundleError):
    """A Milvus index that cannot be used: unreachable, missing, foreign, or built by another embedder. A
    BundleError, so every caller that reports a bad bundle reports this the same way."""


def is_lite(uri: str) -> bool:
    """Whether `uri` names a Milvus Lite file (pymilvus' own rule: the URI ends with .db)."""
    return uri.endswith(".db")


def check_uri(uri: str) -> str:
    """The URI as given when it names Milvus Lite or a server; MilvusError saying what is accepted otherwise."""
    uri = (uri or "").strip()
    if is_lite(uri) or uri.startswith(REMOTE_SCHEMES):
        return uri
    raise MilvusError(f"Milvus URI {uri!r} is neither a Milvus Lite file (FILE.db) nor a server address "
                      f"(http://host:19530)")


def connect(uri: str, timeout: float = CONNECT_TIMEOUT_SECONDS) -> Any:
    """A MilvusClient for `uri`. A Milvus Lite file is created on first use (its folder must exist); a server
    that cannot be reached raises MilvusError without touching the local disk."""
    uri = check_uri(uri)
    try:
        from pymilvus import MilvusClient
    except ImportError as error:
        raise MilvusError("the Milvus backend needs pymilvus and milvus-lite: "
                          "pip install -e '.[milvus]'") from error
    if is_lite(uri) and not Path(uri).expanduser().resolve().parent.is_dir():
        raise MilvusError(f"cannot create the Milvus Lite file {uri}: its folder does not exist")
    try:
        return MilvusClient(uri=str(Path(uri).expanduser()) if is_lite(uri) else uri, timeout=timeout)
    except Exception as error:  # pymilvus raises MilvusException, grpc its own errors, Lite OSError
        raise MilvusError(f"cannot reach Milvus at {uri}: {_first_line(error)}. Check that the server is "
                          f"running and the address is right; nothing was written.") from error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
