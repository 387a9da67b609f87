"""The claim reading's parts that need no model: where a page says the claimed value, who the claim is about."""

from __future__ import annotations

from rag.answering.claims import names_subject, value_occurrences


def test_a_value_is_found_as_written_or_by_its_root_in_another_case():
    text = "Лев Ландау родился в Баку. Позже он переехал в Ольховец, а затем жил в Ольховце до войны."
    assert [text[s:e] for s, e in value_occurrences(text, "Баку")] == ["Баку"]
    assert [text[s:e] for s, e in value_occurrences(text, "Ольховце")] == ["Ольховце"]  # as written first
    assert [text[s:e] for s, e in value_occurrences(text, "Ольховцом")] == ["Ольховец", "Ольховце"]
    assert value_occurrences("She received it for the discovery of polonium.", "Polonium") == [(37, 45)]
    assert value_occurrences("他出生于梧岚市。", "梧岚市") == [(4, 7)]
    assert value_occurrences("他出生于梧岚市。", "枫渡镇") == []
    assert value_occurrences("Anything at all.", "  ") == []


def test_a_page_names_the_subject_in_any_inflection_and_a_stranger_in_none():
    page = {"title": "Ландау, Лев Давидович", "text": "Льва Ландау считают одним из основателей школы."}
    assert names_subject("Лев Ландау", page) and names_subject("Льва Ландау", page)
    assert not names_subject("Zorvan Pellick", page) and not names_subject("", page)


def test_a_section_names_the_subject_its_document_title_and_headings_hold():
    section = {"title": "Technical Steering Council", "document": "Corvane Platform",
               "metadata": {"section_path": ["Governance", "Technical Steering Council"]},
               "text": "The council approves the roadmap. Ingrid Tolvaj chairs it."}
    assert names_subject("Corvane Technical Steering Council", section)
    assert not names_subject("Corvane Technical Steering Council", {**section, "metadata": {}})
