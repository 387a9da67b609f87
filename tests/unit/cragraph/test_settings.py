"""One settings surface: every stage setting is a Context field with the stage's own default and description,
sections round-trip through Context, and allowed-value fields refuse other values at once."""

from __future__ import annotations

from dataclasses import fields
from typing import get_type_hints

import pytest

from cragraph.context import SECTIONS, Context
from cragraph.planning.plan import CompileSettings, PlanLimits
from cragraph.planning.settings import MultihopSettings
from cragraph.retrieval.retriever import RetrievalSettings
from cragraph.settings import default_of, prefixed, section


@pytest.mark.parametrize(("kind", "prefix"), SECTIONS, ids=[kind.__name__ for kind, _ in SECTIONS])
def test_every_stage_setting_is_reachable_from_context_with_the_same_default(kind, prefix):
    context_fields = {item.name: item for item in fields(Context)}
    context_hints, own_hints = get_type_hints(Context), get_type_hints(kind)
    for item in fields(kind):
        name = prefix + item.name
        assert name in context_fields, f"{kind.__name__}.{item.name} has no Context field {name}"
        mirror = context_fields[name]
        assert default_of(mirror) == default_of(item), f"{name}: Context default differs from {kind.__name__}'s"
        assert mirror.metadata["description"] == item.metadata["description"]
        assert context_hints[name] == own_hints[item.name], f"{name}: type differs"
    assert section(kind, Context(), prefix) == kind()


def test_sections_round_trip_through_context():
    custom = RetrievalSettings(fusion="rrf", rrf_k=10, alpha_flat=0.7, max_query_chars=100)
    assert section(RetrievalSettings, Context(**prefixed(custom, "retrieval_")), "retrieval_") == custom
    assert section(RetrievalSettings, Context(retrieval_pool=11), "retrieval_", rrf_k=7) == RetrievalSettings(
        pool=11, rrf_k=7)


def test_the_planners_derived_settings_agree_with_their_own_defaults():
    assert MultihopSettings().limits() == PlanLimits()
    derived = MultihopSettings().compile_settings()
    assert derived == CompileSettings()


def test_an_allowed_value_setting_refuses_others_when_the_context_is_made():
    with pytest.raises(ValueError, match="Context.multihop must be one of 'auto', 'always', 'never'"):
        Context(multihop="sometimes")
    with pytest.raises(ValueError, match="retrieval_fusion"):
        Context(retrieval_fusion="max")


def test_an_allowed_value_from_the_environment_is_checked_too(monkeypatch):
    monkeypatch.setenv("CRAGRAPH_STRATEGY", "fastest")
    with pytest.raises(ValueError, match="strategy"):
        Context()
    monkeypatch.setenv("CRAGRAPH_STRATEGY", "auto")
    assert Context().strategy == "auto"
