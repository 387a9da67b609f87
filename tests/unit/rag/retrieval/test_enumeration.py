"""Enumeration requests are told by rules in every language, Chinese in either script."""

from __future__ import annotations

import pytest

from rag.retrieval.enumeration import enumeration_request


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("List all the moons of Mars.", "List"),
        ("Перечисли все спутники Марса.", "Перечисли"),
        ("列举火星的所有卫星。", "列举"),
        ("列舉火星的所有衛星。", "列舉"),  # traditional characters: the request as the user wrote it
        ("羅列火星的衛星", "羅列"),
    ],
)
def test_an_enumeration_request_is_found_and_quoted_as_written(question, asked):
    assert enumeration_request(question) == asked


@pytest.mark.parametrize("question", ["Who discovered all of Mars's moons?", "火星有幾顆衛星？"])
def test_other_questions_are_not_enumerations(question):
    assert enumeration_request(question) is None
