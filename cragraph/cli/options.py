"""What several commands share: the default index folder and the metadata filter syntax."""

from __future__ import annotations

import os
from typing import Any

DEFAULT_INDEX = os.environ.get("CRAGRAPH_INDEX", ".cragraph/index")


def parse_filters(items: list[str]) -> dict[str, Any]:
    """KEY=VALUE -> equality, KEY=PREFIX* -> {"prefix": PREFIX}."""
    filters: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"bad filter {item!r}: expected KEY=VALUE or KEY=PREFIX*")
        filters[key] = {"prefix": value[:-1]} if value.endswith("*") else value
    return filters


BACKEND_HELP = ("where the index lives: bundle (a folder, the default) or milvus (a Milvus collection at --uri); "
                "--uri alone means milvus")
URI_HELP = "the Milvus index: a Milvus Lite file (FILE.db, embedded) or a Milvus server (http://host:19530)"


def add_backend_options(parser: Any) -> None:
    """--backend and --uri, as `index`, `search` and `ask` take them."""
    parser.add_argument("--backend", choices=("bundle", "milvus"), default=None, help=BACKEND_HELP)
    parser.add_argument("--uri", default=None, metavar="URI", help=URI_HELP)


def index_location(backend: str | None, uri: str | None, index: str | None) -> tuple[str, str]:
    """(backend, location) from the options: the bundle folder `index`, or the Milvus URI."""
    backend = backend or ("milvus" if uri else "bundle")
    if backend == "milvus":
        if not uri:
            raise ValueError("--backend milvus needs --uri: a Milvus Lite file (FILE.db) or a server "
                             "(http://host:19530)")
        return backend, uri
    if uri:
        raise ValueError("--uri names a Milvus index; it does not go with --backend bundle (use --index FOLDER)")
    return backend, index or DEFAULT_INDEX
