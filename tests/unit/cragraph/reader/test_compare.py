"""Comparative questions answered from one value per option, the options parsed as the reader parses them."""

import pytest

from cragraph.reader.compare import Compared, compare_options
from cragraph.reader.questions import question_form
from cragraph.reader.types import Passage


def _compare(question: str, language: str, passages: list[Passage]) -> Compared | None:
    form = question_form(question, language)
    assert form.kind == "options", form
    return compare_options(question, form.options, passages)


def test_a_rank_or_a_numbered_name_is_not_a_size() -> None:
    passages = [
        Passage("Mount Alder, surveyed as K4, is the 13th highest mountain in the world at 8035 m.", "Mount Alder"),
        Passage(
            "Mount Birch is a peak of the range. At an elevation of 7205 m it is the 106th highest.", "Mount Birch"
        ),
    ]
    compared = _compare("Which mountain is taller, Mount Alder or Mount Birch?", "en", passages)
    assert compared is not None and compared.option == "Mount Alder", compared
    assert compared.values == (8035.0, 7205.0)


def test_a_passage_that_gives_only_a_rank_leaves_the_answer_to_the_reader() -> None:
    passages = [
        Passage("Mount Cedar is the 23rd-highest peak in the world.", "Mount Cedar"),
        Passage("Mount Dogwood is the 12th highest mountain in the world at 8051 m.", "Mount Dogwood"),
    ]
    assert _compare("Which mountain is higher, Mount Cedar or Mount Dogwood?", "en", passages) is None


@pytest.mark.parametrize(
    ("language", "question", "first", "second"),
    [
        ("zh", "哪座山更高，甲山还是乙山？", "甲山是世界第13高峰，海拔8035米。", "乙山海拔7205米，是世界第106高峰。"),
        (
            "ru",
            "Какая гора выше, Альдер или Берёза?",
            "Альдер — 13-я по высоте вершина мира, её высота 8035 м.",
            "Берёза — горная вершина высотой 7205 м.",
        ),
    ],
)
def test_a_chinese_or_russian_rank_is_not_a_size(language: str, question: str, first: str, second: str) -> None:
    form = question_form(question, language)
    passages = [Passage(first, form.options[0]), Passage(second, form.options[1])]
    compared = _compare(question, language, passages)
    assert compared is not None and compared.option == form.options[0], compared
