"""The list reading: which questions ask for several things, and which list a span points at."""

import pytest

from rag.answering.candidates import Candidate
from rag.answering.lists import MAX_ITEMS, list_at, list_groups, listed_note, with_lists
from rag.reader.types import ReaderAnswer
from rag.retrieval.enumeration import asks_for_several

MANUAL = """The gateway consists of three components. Each runs as its own process:

- **Portico** — the HTTP front end.
- Tallyroll: the segment store
- Loomwright (ingest)

| Site | Town | Opened |
|---|---|---|
| Foundry Yard | Esselby | 2017 |
| Marlpit | Granthorpe | 2019 |

Portico ships the Keyring, Turnstile and Watchword plugins. Its lead is Oona Bekessy, who wrote it."""


def span(text: str, word: str) -> tuple[int, int]:
    start = text.index(word)
    return start, start + len(word)


@pytest.mark.parametrize(("question", "expected"), [
    ("What are the core components of the platform?", True),
    ("Which authentication plugins does Portico ship?", True),
    ("In which towns are the data centres located?", True),
    ("List all departments of the institute", True),
    ("Перечислите организации консорциума.", True),
    ("Какие проекты выполнял консорциум?", True),
    ("集团有哪些常规水源？", True),
    ("What is the codename of release 3.0?", False),
    ("Which organisation does Ingrid Tolvaj direct?", False),
    ("Who is the lead maintainer of Kilnhouse?", False),
    ("In which year did she step down?", False),
    ("Кто руководил проектом «Гидросеть»?", False),
    ("青桐水厂的厂长是谁？", False),
])
def test_a_question_asks_for_a_list_by_its_form(question: str, expected: bool) -> None:
    assert asks_for_several(question) is expected


@pytest.mark.parametrize("word", ["three", "Portico", "Tallyroll", "Loomwright"])
def test_a_block_is_read_from_any_of_its_items_or_the_sentence_that_introduces_it(word: str) -> None:
    assert list_at(MANUAL, *span(MANUAL, word)) == (["Portico", "Tallyroll", "Loomwright"], "block")


WRAPPED = """The Service operates three laboratories:

1. **Dunmere Processing Laboratory** — separates donated blood into red cells and
   plasma. Its head is Dr Imran Voss.
2. **Morrowick Screening Laboratory** — tests every donation. Its head is on leave;

   the laboratory is led in the meantime by Dr Clara Fenwick.
3. **Penhallow Reference Laboratory** — antibody work.

The Lowther Stem Cell Laboratory was transferred in 2019."""


@pytest.mark.parametrize("word", ["three", "Morrowick", "plasma", "Clara Fenwick", "Penhallow"])
def test_items_wrapped_onto_indented_lines_stay_one_list(word: str) -> None:
    expected = ["Dunmere Processing Laboratory", "Morrowick Screening Laboratory", "Penhallow Reference Laboratory"]
    assert list_at(WRAPPED, *span(WRAPPED, word)) == (expected, "block")
    assert list_at(WRAPPED, *span(WRAPPED, "Lowther")) == ([], "")


TABLED = "| 保存库 | 温度 |\n|---|---|\n| 长期库 | −18℃ |\n| 中期库 | −4℃ |"


@pytest.mark.parametrize(("sentence", "word", "expected"), [
    ("种质库共有四座保存库,分别采用不同的保存方式。各库情况如下表。", "四座", (["长期库", "中期库"], "block")),
    ("The bank runs 2 stores, cold and warm. Both report yearly.", "2 stores", (["长期库", "中期库"], "block")),
    # a year is no count: the commas of its sentence are its series
    ("It opened stores in 2019, 2021 and 2024. The bank runs them.", "2021", (["2019", "2021", "2024"], "sentence")),
])
def test_a_count_reads_the_table_after_its_paragraph_before_its_sentences_commas(
        sentence: str, word: str, expected: tuple[list[str], str]) -> None:
    text = f"{sentence}\n\n{TABLED}"
    assert list_at(text, *span(text, word)) == expected


def test_a_table_cell_gives_its_column_without_the_header() -> None:
    assert list_at(MANUAL, *span(MANUAL, "Granthorpe")) == (["Esselby", "Granthorpe"], "block")


@pytest.mark.parametrize("word", ["the following service centres", "Tallow Yard"])
def test_a_sentence_introducing_a_table_gives_its_first_column_and_outer_pipes_are_optional(word: str) -> None:
    text = ("The company runs the following service centres:\n\nCentre | Town | Head\n"
            "Tallow Yard | Esselby | Ann Rook\nWeir House | Granthorpe | Tom Vale\n\nThe end.")
    first_column = ["Tallow Yard", "Weir House"]
    assert list_at(text, *span(text, word))[0] == first_column


@pytest.mark.parametrize(("text", "word", "expected"), [
    (MANUAL, "Turnstile", ["Keyring", "Turnstile", "Watchword"]),
    ("In 2019 the cooperative opened Marlpit, Weir House and Tannery Lane.", "Weir House",
     ["Marlpit", "Weir House", "Tannery Lane"]),
    ("Консорциум объединяет институт, университет и обсерваторию.", "университет",
     ["институт", "университет", "обсерваторию"]),
    ("集团常规水源包括翠屏水库、白沙湖和鹭溪水库。", "白沙湖", ["翠屏水库", "白沙湖", "鹭溪水库"]),
])
def test_a_coordination_gives_its_members(text: str, word: str, expected: list[str]) -> None:
    assert list_at(text, *span(text, word)) == (expected, "sentence")


def test_a_span_in_no_list_gives_none() -> None:
    assert list_at(MANUAL, *span(MANUAL, "Oona Bekessy")) == ([], "")


@pytest.mark.parametrize(("word", "expected"), [
    ("four", ["Tarn Creamery", "Wick Mill"]),  # a count in the paragraph before the table: its first column
    ("Ada Lind", []),  # a name in that paragraph is one thing, not the set
])
def test_a_paragraph_right_before_a_table_introduces_it(word: str, expected: list[str]) -> None:
    text = ("The union runs four plants under Ada Lind. All report to its board.\n\n| Plant | Opened |\n|---|---|\n"
            "| Tarn Creamery | 2011 |\n| Wick Mill | 2013 |\n")
    at = text.index(word)
    assert list_at(text, at, at + len(word))[0] == expected


def test_a_candidate_pointing_into_a_list_becomes_the_list_read_from_its_whole_section() -> None:
    chunk = MANUAL.split("\n\n")[1]  # the block alone, as a refined strip might hold one item only
    strip = "- Tallyroll: the segment store"
    read = ReaderAnswer("Tallyroll", "span", 0, strip, 2, 11, 1.0)
    candidate = Candidate(read, "one_pass", {"text": strip})
    (listed,) = with_lists([candidate], lambda passage: (MANUAL, MANUAL.index(chunk)))
    assert listed.items == ["Portico", "Tallyroll", "Loomwright"] and listed.text == "Portico, Tallyroll, Loomwright"
    assert listed_note([(listed, listed.items)]).startswith("3 items found in 1 passage;")


def test_a_very_long_list_is_cut_and_says_how_long_it_was() -> None:
    text = "\n".join(f"- item{i}" for i in range(MAX_ITEMS + 50))
    read = ReaderAnswer("item3", "span", 0, "- item3", text.index("item3"), text.index("item3") + 5, 1.0)
    (listed,) = with_lists([Candidate(read, "one_pass", {"text": text})], lambda passage: (text, 0))
    assert len(listed.items) == MAX_ITEMS and listed.listed == MAX_ITEMS + 50
    assert listed_note([(listed, listed.items)]).startswith(
        f"{MAX_ITEMS + 50} items found in 1 passage; the first {MAX_ITEMS} are given")


def test_a_list_continued_in_another_passage_is_gathered_when_the_decision_would_answer_it_alone() -> None:
    def listed(items: list[str], passage: str, probability: float) -> Candidate:
        read = ReaderAnswer(items[0], "span", 0, "", 0, len(items[0]), 1.0)
        return Candidate(read, "one_pass", {"id": passage}, probability=probability, items=items, listed=len(items))

    first, more, weak = listed(["A", "B"], "p1", 0.8), listed(["B", "C"], "p2", 0.6), listed(["D", "E"], "p3", 0.2)
    groups = list_groups(first, [weak, more, first], threshold=0.5)
    assert [(c.passage["id"], items) for c, items in groups] == [("p1", ["A", "B"]), ("p2", ["C"])]
    assert listed_note(groups).startswith("3 items found in 2 passages")
