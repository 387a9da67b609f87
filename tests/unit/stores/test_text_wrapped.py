"""Sentence splitting of hard-wrapped prose (issue 16): pysbd ended a sentence at every line break, so a wrapped
sentence was cut in two and its tail joined the next sentence ("Netherlands. Its first product ..." as one
strip); a short unpunctuated line such as a title keeps its own break."""

from __future__ import annotations

from rag.knowledge.strips import strip_spans
from stores.text import split_sentences

WRAPPED = ("Helix Robotics was founded in 2009 in the city of Eindhoven, the\n"
           "Netherlands. Its first product was a welding arm for the car makers of\n"
           "the region. It sold well.")


def test_a_wrapped_sentence_stays_one_sentence() -> None:
    assert [" ".join(s.split()) for s in split_sentences(WRAPPED, "en")] == [
        "Helix Robotics was founded in 2009 in the city of Eindhoven, the Netherlands.",
        "Its first product was a welding arm for the car makers of the region.",
        "It sold well.",
    ]


def test_no_strip_starts_inside_a_sentence() -> None:
    strips = [WRAPPED[start:end] for start, end in strip_spans(WRAPPED, "en", 60, 400)]
    assert strips[0].endswith("Netherlands.") and strips[1].startswith("Its first product")


def test_short_unpunctuated_lines_keep_their_break() -> None:
    assert split_sentences("Helix Robotics\nHelix Robotics was founded in 2009.", "en") == [
        "Helix Robotics", "Helix Robotics was founded in 2009."]
    assert split_sentences("Director: Marie Curie\nFounded: 1909", "en") == ["Director: Marie Curie", "Founded: 1909"]
