"""Reading the operator configuration: defaults, then the TOML file, then CRAGRAPH_<SECTION>__<KEY>, each value
checked against its declared type; a mistake is refused naming the key, with the closest one."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_type_hints

from rag.config.moved import CONFIG_FILE, MOVED, moved_message
from rag.config.operator import SECTIONS, ConfigError, Operator, checked_value
from rag.settings import kind_text, parse_text

CONFIG_ENV = "CRAGRAPH_CONFIG"
_PREFIX = "CRAGRAPH_"


@dataclass(frozen=True)
class Loaded:
    """The configuration and where each value came from (what `cragraph config` prints)."""

    config: Operator
    sources: dict[str, str]  # "section.key" -> "default", "file PATH" or "env NAME"
    path: Path | None


def config_path(environ: Mapping[str, str]) -> Path | None:
    """The file CRAGRAPH_CONFIG names (it must exist), else ./cragraph.toml when there is one."""
    named = environ.get(CONFIG_ENV, "").strip()
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(f"{CONFIG_ENV}={named}: no such file")
        return path
    local = Path(CONFIG_FILE)
    return local if local.is_file() else None


def _from_file(path: Path) -> dict[str, dict[str, Any]]:
    """[section] -> key -> checked value; a key outside a section is refused, naming the section it belongs in."""
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read as TOML ({error})") from None
    values: dict[str, dict[str, Any]] = {}
    for section, keys in table.items():
        if not isinstance(keys, dict):
            known = MOVED.get(section)
            hint = f" (did you mean [{known.split('.')[0]}] {known.split('.')[1]}?)" if known else ""
            raise ConfigError(f"{path}: {section} is outside a [section]{hint}; sections: {', '.join(SECTIONS)}")
        for key, value in keys.items():
            values.setdefault(section, {})[key] = checked_value(section, key, value, str(path))
    return values


def _from_env(environ: Mapping[str, str]) -> dict[str, tuple[str, str, Any]]:
    """CRAGRAPH_<SECTION>__<KEY> values as (section, key, value); a CRAGRAPH_<OLD FIELD> of a setting that
    moved or was removed is refused, saying where it lives now."""
    found = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith(_PREFIX):
            continue
        rest = name[len(_PREFIX):]
        if "__" not in rest:
            message = moved_message(rest.lower())
            if message:
                raise ConfigError(f"{name}: {message}")
            continue
        section, _, key = rest.lower().partition("__")
        if section not in SECTIONS or key not in get_type_hints(SECTIONS[section]):
            checked_value(section, key, None, name)  # raises, naming the section or key
        hints = get_type_hints(SECTIONS[section])
        try:
            value = parse_text(raw, hints[key])
        except ValueError as error:
            raise ConfigError(f"{name}={raw!r}: [{section}] {key} expects {kind_text(hints[key])} ({error})") from None
        found[name] = (section, key, checked_value(section, key, value, name))
    return found


def load(environ: Mapping[str, str] | None = None) -> Loaded:
    """The operator configuration from the defaults, the file and the environment, with each value's source."""
    environ = os.environ if environ is None else environ
    path = config_path(environ)
    values = _from_file(path) if path else {}
    sources = {f"{section}.{key}": f"file {path}" for section, keys in values.items() for key in keys}
    for name, (section, key, value) in _from_env(environ).items():
        values.setdefault(section, {})[key] = value
        sources[f"{section}.{key}"] = f"env {name}"
    config = Operator(**{section: kind(**values.get(section, {})) for section, kind in SECTIONS.items()})
    for section, kind in SECTIONS.items():
        for item in dataclasses.fields(kind):
            sources.setdefault(f"{section}.{item.name}", "default")
    return Loaded(config, sources, path)
