""" "Which came first: A or B?" over a report's sections, read by the real reader: each option's date is the
reader's, the comparison the rule's."""

from __future__ import annotations

import pytest

from rag.answering.rules import read_ranked
from rag.reader.reader import DEFAULT_WEIGHTS, Reader
from rag.reader.types import Passage

pytestmark = pytest.mark.integration

REPORT = [
    Passage("Hubs. Hollins Depot opened in June 2022 on part of the borough's vehicle depot. It has 24 charge "
            "points and serves the taxi trade.", "Operations report"),
    Passage("Projects. Project Lantern (March 2021) fitted 140 lamp-post chargers in four districts. Project "
            "Mooring, still in planning, will add chargers at the marina.", "Operations report"),
]


def test_the_event_the_reader_dates_first_is_answered_as_the_question_words_it():
    reader = Reader.load(DEFAULT_WEIGHTS)
    question = "Which came first: the opening of Hollins Depot or the start of Project Lantern?"
    answers = read_ranked(reader, question, REPORT, "en")
    assert [(a.text, a.rule, a.passage) for a in answers] == [("the start of Project Lantern", "compared", 1)]
