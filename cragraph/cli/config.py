"""`cragraph config`: the operator configuration as TOML, each value with where it came from."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any


def register(commands: argparse._SubParsersAction) -> None:
    config = commands.add_parser(
        "config",
        help="print the operator configuration (stage internals): every setting, its value and its source",
        description="Every operator setting as TOML (paste into cragraph.toml to change it), each with its source: "
                    "default, the file (CRAGRAPH_CONFIG, else ./cragraph.toml) or the environment "
                    "(CRAGRAPH_<SECTION>__<KEY>). Per-run settings are the Context's: cragraph ask --set.",
    )
    config.set_defaults(run=run_config)


def toml_value(value: Any) -> str:
    """A value as TOML writes it (strings, numbers and booleans as JSON does; a dict as an inline table)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def render(loaded: Any) -> str:
    """The configuration as TOML lines, a `# source` comment on each."""
    where = f"file {loaded.path}" if loaded.path else "no file (CRAGRAPH_CONFIG unset, no ./cragraph.toml)"
    lines = [f"# operator configuration: {where}; environment: CRAGRAPH_<SECTION>__<KEY>"]
    for section in dataclasses.fields(loaded.config):
        lines.append(f"\n[{section.name}]")
        values = getattr(loaded.config, section.name)
        rows = [(f"{item.name} = {toml_value(getattr(values, item.name))}",
                 loaded.sources[f"{section.name}.{item.name}"]) for item in dataclasses.fields(values) if item.init]
        width = max(len(text) for text, _ in rows)
        lines += [f"{text.ljust(width)}  # {source}" for text, source in rows]
    return "\n".join(lines)


def run_config(args: argparse.Namespace) -> int:
    from rag.config import reload

    print(render(reload()))
    return 0
