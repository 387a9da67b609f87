"""Tables read row by row as sentences, and answers cut back from the table as written."""

from rag.reader.folding import as_written, fold
from rag.reader.table_rows import rows_as_sentences, to_source
from rag.reader.types import Passage, ReaderAnswer
from stores.markdown_tables import header_above

REPORT = """Plants connected to the system:

| Plant | District | Capacity, MW | Connected |
|---|---|---|---|
| No. 5 Northern | North | 120 | 2020 |
| No. 6 River | Riverside | 95 |  |

The River plant is the smallest."""


def test_each_row_is_written_with_its_column_names() -> None:
    read, pieces = rows_as_sentences(REPORT)
    assert "Plant: No. 5 Northern, District: North, Capacity, MW: 120, Connected: 2020.\n" in read
    assert "Plant: No. 6 River, District: Riverside, Capacity, MW: 95.\n" in read  # an empty cell is left out
    assert read.startswith("Plants connected to the system:\n\n") and read.endswith("The River plant is the smallest.")
    at = read.index("95")
    assert to_source(pieces, at, at + 2) == (REPORT.index("95"), REPORT.index("95") + 2)


def test_a_span_over_a_name_and_its_value_is_the_value() -> None:
    read, pieces = rows_as_sentences(REPORT)
    at = read.index("Connected: 2020")
    start, end = to_source(pieces, at, at + len("Connected: 2020"))
    assert REPORT[start:end] == "2020"
    header = read.index("District")  # the column name alone maps to the header cell
    start, end = to_source(pieces, header, header + len("District"))
    assert (start, end) == (REPORT.index("District"), REPORT.index("District") + len("District"))
    assert to_source(pieces, read.index(": No. 5"), read.index(": No. 5") + 2) is None  # only inserted text


def test_text_without_a_headed_table_is_read_as_it_is() -> None:
    assert rows_as_sentences("No table here.\nA | B is not a table either.") == ("", ())
    rows_only = "| No. 5 Northern | North | 120 |\n| No. 6 River | Riverside | 95 |"  # its header in another chunk
    assert rows_as_sentences(rows_only) == ("", ())
    assert rows_as_sentences("| A | B |\n|---|---|\n\nText.") == ("", ())  # a header without rows


def test_a_table_without_outer_pipes_is_read_too() -> None:
    read, _ = rows_as_sentences("Name | Year | Head\n--- | --- | ---\nOstrel | 1998 | Ana Lind\n")
    assert "Name: Ostrel, Year: 1998, Head: Ana Lind.\n" in read


def test_an_answer_and_its_sentence_are_cut_from_the_table_as_written() -> None:
    passages = [Passage("Intro.", "Other"), Passage(REPORT, "Plants")]
    folded = fold(passages)
    read = folded[1].text
    at = read.index("2020")
    row_start = read.index("Plant: No. 5")
    sentence = read[row_start : read.index(".\n", row_start) + 1]
    answer = ReaderAnswer("2020", "span", 1, sentence, at, at + 4, 1.0)
    written = as_written(answer, passages, folded)
    assert written.text == "2020" and REPORT[written.start : written.end] == "2020"
    assert written.sentence == "No. 5 Northern | North | 120 | 2020"
    assert fold([Passage("Plain prose.")])[0].pieces == ()  # prose keeps its offsets


def test_rows_whose_header_another_chunk_holds_read_with_the_header_given() -> None:
    rows_only = "| No. 6 River | Riverside | 95 | 2021 |\n\nThe River plant is the smallest."
    header = "| Plant | District | Capacity, MW | Connected |"
    read, pieces = rows_as_sentences(rows_only, header)
    assert read.startswith("Plant: No. 6 River, District: Riverside, Capacity, MW: 95, Connected: 2021.\n")
    at = read.index("Connected")
    assert to_source(pieces, at, at + len("Connected")) is None  # the given header is not in the text
    at = read.index("2021")
    assert to_source(pieces, at, at + 4) == (rows_only.index("2021"), rows_only.index("2021") + 4)


def test_a_chunk_starting_inside_a_table_knows_its_header() -> None:
    assert header_above(REPORT, REPORT.index("| No. 6")) == "| Plant | District | Capacity, MW | Connected |"
    assert header_above(REPORT, REPORT.index("| Plant")) == ""  # the header row itself
    assert header_above(REPORT, REPORT.index("The River")) == ""  # prose
    assert header_above("| a | b |\n| c | d |", 10) == ""  # rows without a header


def test_a_span_over_several_cells_is_its_last_cell() -> None:
    read, pieces = rows_as_sentences(REPORT)
    at = read.index("No. 5 Northern, District")
    end = read.index("North,", at + 10) + len("North")
    start, stop = to_source(pieces, at, end)
    assert REPORT[start:stop] == "North"


def test_the_rows_the_question_names_are_read_alone() -> None:
    asked = frozenset(["river", "plant", "connected"])
    read, _ = rows_as_sentences(REPORT, asked=asked)
    assert "No. 6 River" in read and "No. 5 Northern" not in read
    read, _ = rows_as_sentences(REPORT, asked=frozenset(["plant", "capacity"]))  # no row named: every row
    assert "No. 6 River" in read and "No. 5 Northern" in read


def test_a_plain_text_table_without_a_rule_row_takes_its_first_row_as_the_header() -> None:
    text = "Ships:\nName | Length | Displacement\nTern | 72 m | 2480 t\nGull | 24 m | 160 t\n\nThe Tern is new."
    read, pieces = rows_as_sentences(text)
    assert "Name: Tern, Length: 72 m, Displacement: 2480 t.\n" in read
    at = read.index("160 t")
    assert to_source(pieces, at, at + 5) == (text.index("160 t"), text.index("160 t") + 5)
    assert rows_as_sentences("a | b | c\nd | e\n") == ("", ())  # two rows of unequal cells: no table
