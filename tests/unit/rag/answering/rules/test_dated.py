""" "Which came first: A or B?" over a report that dates events: the options as the question words them, each
one's date as the reader reads it, compared by year and then month."""

from __future__ import annotations

import pytest

from rag.answering.rules.dated import date_of, dated_answer, earlier, speaks_of
from rag.reader.questions import question_form
from rag.reader.types import Passage, ReaderAnswer


@pytest.mark.parametrize(("text", "expected"), [
    ("March 2021 – December 2024", (2021, 3)),  # a range: its first date
    ("апреля 2022 года", (2022, 4)),
    ("в мае 2019 года", (2019, 5)),
    ("2021年11月", (2021, 11)),  # not "1月"
    ("2023年", (2023, None)),
    ("весной", None),
])
def test_a_date_is_its_year_and_the_month_written_next_to_it(text: str, expected: tuple[int, int | None] | None):
    assert date_of(text) == expected


def test_one_year_without_both_months_does_not_tell_which_came_first():
    assert earlier((2020, None), (2021, 1)) == -1 and earlier((2021, 3), (2021, 6)) == -1
    assert earlier((2021, 9), (2021, 6)) == 1
    assert earlier((2021, None), (2021, 6)) is None and earlier((2021, 6), (2021, 6)) is None


@pytest.mark.parametrize(("question", "language", "options"), [
    ("Which came first: the opening of the Hollins Depot hub or the start of Project Lantern?", "en",
     ("the opening of the Hollins Depot hub", "the start of Project Lantern")),
    ("Which came first: the casting of the first bell or the purchase of the yard?", "en",
     ("the casting of the first bell", "the purchase of the yard")),
    ("Что было введено в эксплуатацию раньше: лидар «Иней» или ионозонд «Парус-М»?", "ru",
     ("лидар «Иней»", "ионозонд «Парус-М»")),
    ("Какое судно вошло в строй раньше — паром «Полуночник» или катер «Обедник»?", "ru",
     ("паром «Полуночник»", "катер «Обедник»")),
])
def test_options_announced_by_a_colon_or_a_dash_may_be_events_as_well_as_names(question, language, options):
    assert question_form(question, language).options == options


def test_an_unannounced_alternative_of_plain_words_is_still_no_pair_of_options():
    assert question_form("Was the harvest high or low?", "en").kind != "options"


def test_a_date_read_from_a_sentence_about_something_else_dates_nothing():
    assert speaks_of("Project Lantern (March 2021 – December 2024) built the kerbside network.",
                     "the start of Project Lantern")
    assert not speaks_of("Hathersedge Depot, opened in 1961, was closed in March 2021.",
                         "the sale of Ulverby Logistics")
    assert speaks_of("2021年3月，光伏屋顶项目启动。", "光伏屋顶项目")


class _DatesReader:
    """Stands in for the span reader: answers "When was X?" with the date the test gives X, from its sentence."""

    def __init__(self, dates: dict[str, tuple[int, str]]) -> None:
        self.dates = dates

    def read(self, question: str, passages: list[Passage], language: str) -> ReaderAnswer | None:
        for subject, (index, date) in self.dates.items():
            if subject in question:
                text = passages[index].text
                at = text.find(date)
                return ReaderAnswer(date, "span", index, text, at, at + len(date), 1.0)
        return None


PASSAGES = [Passage("Hollins Depot hub opened in June 2022 on part of the borough's vehicle depot."),
            Passage("Project Lantern (March 2021 – December 2024) built the kerbside network.")]


def test_the_earlier_event_is_answered_as_the_question_words_it_and_cited_where_its_date_was_read():
    reader = _DatesReader({"Hollins": (0, "June 2022"), "Lantern": (1, "March 2021")})
    options = ("the opening of the Hollins Depot hub", "the start of Project Lantern")
    answer = dated_answer(reader, options, PASSAGES, "en", -1)  # type: ignore[arg-type]
    assert answer is not None and (answer.text, answer.passage, answer.rule) == (options[1], 1, "compared")
    later = dated_answer(reader, options, PASSAGES, "en", +1)  # type: ignore[arg-type]
    assert later is not None and later.text == options[0]


def test_no_answer_when_a_date_is_missing_or_the_dates_do_not_tell():
    options = ("the opening of the Hollins Depot hub", "the start of Project Lantern")
    assert dated_answer(_DatesReader({"Hollins": (0, "June 2022")}), options, PASSAGES, "en", -1) is None  # type: ignore[arg-type]
    same = [Passage("Hollins Depot hub opened in 2021."), Passage("Project Lantern started in March 2021.")]
    reader = _DatesReader({"Hollins": (0, "2021"), "Lantern": (1, "March 2021")})
    assert dated_answer(reader, options, same, "en", -1) is None  # type: ignore[arg-type]



def test_a_name_is_met_in_any_inflection():
    assert speaks_of("Вышку «Калиновой» ввели в строй в 2019 году.", "ввод в строй вышки «Калиновая»")
