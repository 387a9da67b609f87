"""The operator configuration's declaration: one section per stage, each the stage's own settings dataclass,
and the check every value passes whichever way it comes (file, environment, `operator_config`)."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from rag.config.moved import REMOVED
from rag.config.sections import (
    AnswerSettings,
    GradeSettings,
    HighlightSettings,
    ModelSettings,
    RefineSettings,
    RerankSettings,
    RouteSettings,
    SelectSettings,
    UnderstandSettings,
    WebSettings,
)
from rag.knowledge.strips import StripSettings
from rag.planning.settings import MultihopSettings
from rag.retrieval.graph_walk import GraphSettings
from rag.retrieval.retriever import RetrievalSettings
from rag.retrieval.techniques import Techniques
from rag.settings import checked


@dataclass(frozen=True)
class Operator:
    """Every operator setting, one section per stage in the order a question passes them."""

    understand: UnderstandSettings = field(default_factory=UnderstandSettings)
    route: RouteSettings = field(default_factory=RouteSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    techniques: Techniques = field(default_factory=Techniques)
    graph: GraphSettings = field(default_factory=GraphSettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    grade: GradeSettings = field(default_factory=GradeSettings)
    refine: RefineSettings = field(default_factory=RefineSettings)
    strips: StripSettings = field(default_factory=StripSettings)
    web: WebSettings = field(default_factory=WebSettings)
    select: SelectSettings = field(default_factory=SelectSettings)
    highlight: HighlightSettings = field(default_factory=HighlightSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    multihop: MultihopSettings = field(default_factory=MultihopSettings)
    models: ModelSettings = field(default_factory=ModelSettings)

    def changed(self, **sections: Mapping[str, Any]) -> Operator:
        """A copy with some keys of some sections changed (`changed(grade={"upper": 0.3})`), each checked like a
        config file's."""
        copies = {}
        for name, values in sections.items():
            if name not in SECTIONS:
                checked_value(name, "", None)  # raises, naming the section
            current = getattr(self, name)
            copies[name] = dataclasses.replace(current, **{
                key: checked_value(name, key, value) for key, value in values.items()})
        return dataclasses.replace(self, **copies)


# section name -> its settings class, in the order `cragraph config` prints them
SECTIONS: dict[str, type] = {item.name: type(getattr(Operator(), item.name)) for item in dataclasses.fields(Operator)}


class ConfigError(ValueError):
    """The operator configuration cannot be used (refused when it is first read, before any run)."""


def _close(name: str, known: list[str]) -> str | None:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return close[0] if close else None


def _unknown_key(section: str, key: str, names: list[str]) -> str:
    """Why `key` is not a key of [section]: what replaced it when it was removed, else the closest key (with a
    removed key's replacement when that one is closest)."""
    removed = {path.split(".")[1]: f"{old} was removed: {why}" for old, (path, why) in REMOVED.items()
               if path and path.startswith(f"{section}.")}
    if key in removed:
        return removed[key]
    close = _close(key, names) or _close(key, list(removed))
    if close is None:
        return "unknown key"
    return f"unknown key (did you mean {close!r}?)" + (f": {removed[close]}" if close in removed else "")


def checked_value(section: str, key: str, value: Any, origin: str = "") -> Any:
    """`value` for `[section] key`, type-checked; ConfigError naming an unknown section or key (with the closest
    one, or what replaced a removed key) or a wrong type."""
    at = f"{origin}: " if origin else ""
    if section not in SECTIONS:
        close = _close(section, list(SECTIONS))
        raise ConfigError(f"{at}unknown section [{section}]" + (f" (did you mean {close!r}?)" if close else "") +
                          f"; sections: {', '.join(SECTIONS)}")
    kind = SECTIONS[section]
    names = [item.name for item in dataclasses.fields(kind) if item.init]
    if key not in names:
        raise ConfigError(f"{at}[{section}] {key}: {_unknown_key(section, key, names)}")
    try:
        return checked(f"[{section}] {key}", value, get_type_hints(kind)[key])
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{at}{error}") from None
