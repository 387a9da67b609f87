"""Where `cragraph ask --thread` keeps its threads: a LangGraph checkpointer opened from one spec.

The spec is $CRAGRAPH_CHECKPOINT when set, else a SQLite file in the per-user data folder
(platformdirs' user_data_dir: ~/.local/share/cragraph/threads.sqlite on Linux). A `postgresql://` (or `postgres://`)
URL opens Postgres (langgraph-checkpoint-postgres, the `postgres` extra); anything else is a SQLite file path.

The default is not the index folder: a bundle is copied and renamed on every change (stores/bundle.py), which would
carry a live database along or drop it on a rebuild, and one conversation may outlive, or span, several indexes.
Nor is it the cache folder: threads are the user's data, which a cache clean-up must not delete.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

CHECKPOINT_ENV_VAR = "CRAGRAPH_CHECKPOINT"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
POSTGRES_INSTALL = "pip install 'cragraph[postgres]' (langgraph-checkpoint-postgres and psycopg[binary])"
SQLITE_INSTALL = "pip install langgraph-checkpoint-sqlite"
CONNECT_TIMEOUT_S = 10  # a wrong host fails in seconds, not after the system's TCP timeout


class CheckpointError(ValueError):
    """The checkpoint store cannot be opened: the message names it (password masked) and says why."""


def default_sqlite_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("cragraph")) / "threads.sqlite"


def checkpoint_spec() -> str:
    """$CRAGRAPH_CHECKPOINT, else the default SQLite file."""
    return os.environ.get(CHECKPOINT_ENV_VAR, "").strip() or str(default_sqlite_path())


def is_postgres(spec: str) -> bool:
    return spec.lower().startswith(POSTGRES_SCHEMES)


def describe(spec: str) -> str:
    """The store as it may be shown: a Postgres URL with its password masked."""
    return mask_url(spec) if is_postgres(spec) else spec


def mask_url(url: str) -> str:
    """`url` with the password (in the user part or a `password=` query parameter) replaced by ***."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, _, host = netloc.rpartition("@")
            name, sep, _password = user.partition(":")
            netloc = f"{name}:***@{host}" if sep else netloc
        query = urlencode(
            [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)],
            safe="*/:",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # not parseable as a URL (e.g. a bad port): show only the scheme
        return url.split("://", 1)[0] + "://***"


def _secrets(url: str) -> list[str]:
    """The password strings of a URL, to scrub from a driver's error message."""
    found: list[str] = []
    with contextlib.suppress(ValueError):
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
        found += [v for k, v in parse_qsl(parts.query) if k.lower() == "password" and v]
    match = re.search(r"//[^:/@]*:([^@]*)@", url)  # also when urlsplit refused the URL
    if match and match.group(1):
        found.append(match.group(1))
    return found


def _scrub(text: str, url: str) -> str:
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return " ".join(text.split())


@contextlib.contextmanager
def open_checkpointer(spec: str | None = None) -> Iterator[BaseCheckpointSaver]:
    """A checkpointer for `spec` (default: checkpoint_spec()), its tables created, closed on exit.

    Raises CheckpointError when the store cannot be opened (a wrong URL, an unreachable server, a path that is
    not a SQLite database) or its package is missing."""
    spec = (spec or "").strip() or checkpoint_spec()
    opener = _open_postgres if is_postgres(spec) else _open_sqlite
    with opener(spec) as saver:
        yield saver


@contextlib.contextmanager
def _open_sqlite(spec: str) -> Iterator[BaseCheckpointSaver]:
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as error:
        raise CheckpointError(f"the SQLite checkpointer needs langgraph-checkpoint-sqlite: {SQLITE_INSTALL}") from error
    path = Path(spec).expanduser()
    if spec != ":memory:":
        if path.is_dir():
            raise CheckpointError(f"checkpoint store {path} is a folder; {CHECKPOINT_ENV_VAR} takes a SQLite file path "
                                  "or a postgresql:// URL")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CheckpointError(f"cannot create the folder of checkpoint store {path}: {error}") from error
    try:
        conn = sqlite3.connect(str(path) if spec != ":memory:" else spec, check_same_thread=False)
    except sqlite3.Error as error:
        raise CheckpointError(f"cannot open checkpoint store {path} (SQLite): {error}") from error
    with contextlib.closing(conn):
        saver = SqliteSaver(conn)
        try:
            saver.setup()
        except sqlite3.Error as error:
            raise CheckpointError(f"cannot open checkpoint store {path} (SQLite): {error}") from error
        yield saver


@contextlib.contextmanager
def _open_postgres(url: str) -> Iterator[BaseCheckpointSaver]:
    shown = mask_url(url)
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as error:
        raise CheckpointError(f"checkpoint store {shown} is Postgres, which needs {POSTGRES_INSTALL}") from error
    options: dict[str, Any] = {} if "connect_timeout" in url else {"connect_timeout": CONNECT_TIMEOUT_S}
    try:
        conn = psycopg.Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row, **options)
    except psycopg.Error as error:
        raise CheckpointError(f"cannot connect to checkpoint store {shown}: {_scrub(str(error), url)}") from None
    with conn:
        saver = PostgresSaver(conn)
        try:
            saver.setup()
        except psycopg.Error as error:
            raise CheckpointError(
                f"cannot set up the checkpoint tables in {shown}: {_scrub(str(error), url)}"
            ) from None
        yield saver
