"""A one-pass answer that may be a bridge is read on in the sections that name it, asked the second hop."""

from rag.answering.candidates import Candidate
from rag.answering.readings import answers_to_read_on, hop_question, mentions
from rag.reader.types import ReaderAnswer

REPORT = "Harwick Ferry Company annual report"
LINES = {"id": "r#4", "title": "Lines", "document": REPORT,
         "text": "In 2023 the company ran two lines. The Orrin Bay line is served by the motor ship Kestrel; "
                 "on busy days the Wren stands in."}
CAPTAINS = {"id": "r#9", "title": "Fleet", "document": REPORT,
            "text": "Captains report to the fleet director. The captain of the Kestrel is Ada Morrow. "
                    "The Wren is commanded by Tom Pike."}
ENGINES = {"id": "r#12", "title": "Engines", "document": REPORT,
           "text": "After its new engine the Kestrel burns a seventh less fuel."}
QUESTION = "Who is the captain of the ship that serves the Orrin Bay line?"


def one_pass(text: str, rank: int = 0) -> Candidate:
    sentence = "The Orrin Bay line is served by the motor ship Kestrel; on busy days the Wren stands in."
    at = LINES["text"].index(text)
    read = ReaderAnswer(text, "span", 0, sentence, at, at + len(text), 1.0, margin=2.0, confidence=0.6)
    return Candidate(read, "one_pass", LINES, rank)


def test_answers_that_may_be_bridges_are_names_not_numbers_or_the_questions_words() -> None:
    found = [one_pass("Kestrel"), one_pass("motor ship Kestrel", 1), one_pass("2023", 2), one_pass("Orrin Bay", 3),
             one_pass("Wren", 4)]
    assert [c.text for c in answers_to_read_on(QUESTION, found)] == ["Kestrel", "Wren"]
    page = Candidate(found[0].read, "one_pass", {**LINES, "title": REPORT})  # a page about one entity: not read on
    assert answers_to_read_on(QUESTION, [page]) == []


def test_the_second_hop_asks_of_the_bridge_what_its_sentence_did_not_answer() -> None:
    asked = hop_question(QUESTION, one_pass("Kestrel"))
    assert "Kestrel" in asked and "captain" in asked and "Orrin" not in asked


def test_a_section_naming_the_bridge_is_read_when_it_says_more_of_what_is_asked() -> None:
    passages = [LINES, ENGINES, CAPTAINS]
    bridge = one_pass("Kestrel")
    links = mentions(QUESTION, [(bridge, hop_question(QUESTION, bridge))], passages)
    assert [(link["from"], link["to"]) for link in links] == [(0, 2)]  # the engine section says nothing asked
    assert links[0]["bridge"].text == "Kestrel" and links[0]["asked"] == "Who is the captain of the Kestrel?"
    assert mentions(QUESTION, [(bridge, links[0]["asked"])], [ENGINES, CAPTAINS]) == []  # its own passage is not there
