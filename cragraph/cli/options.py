"""What several commands share: the default index folder and the metadata filter syntax."""

from __future__ import annotations

import argparse
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


CONTEXT_OPTIONS = {"web": "web_search", "chat_model": "chat_model", "llm_answer": "llm_answer",
                   "evaluator": "evaluator"}
"""`cragraph ask` options that set a Context field (option dest -> field): what build_context passes on, and
whose help shows the field's default."""


class ContextDefaults(argparse.HelpFormatter):
    """Help that appends the default of the Context field an option sets (CONTEXT_OPTIONS), read from the Context
    when the help is shown, so it cannot drift from the default a run uses (CRAGRAPH_<FIELD> included). Read then
    rather than at start-up: importing the Context would slow every other command."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        field = CONTEXT_OPTIONS.get(action.dest)
        if not field:
            return text
        from rag.context import Context

        value = getattr(Context(), field)
        shown = ("on" if value else "off") if isinstance(value, bool) else str(value)
        return f"{text} (default: {shown.replace('%', '%%')})"
