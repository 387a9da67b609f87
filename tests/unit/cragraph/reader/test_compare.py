"""Comparative questions answered from one value per option."""

from cragraph.reader.compare import compare_options
from cragraph.reader.types import Passage


def test_a_rank_or_a_numbered_name_is_not_a_size() -> None:
    passages = [
        Passage("Mount Alder, surveyed as K4, is the 13th highest mountain in the world at 8035 m.", "Mount Alder"),
        Passage(
            "Mount Birch is a peak of the range. At an elevation of 7205 m it is the 106th highest.", "Mount Birch"
        ),
    ]
    question = "Which mountain is taller, Mount Alder or Mount Birch?"
    compared = compare_options(question, ("Mount Alder", "Mount Birch"), passages)
    assert compared is not None and compared.option == "Mount Alder", compared
    assert compared.values == (8035.0, 7205.0)


def test_a_passage_that_gives_only_a_rank_leaves_the_answer_to_the_reader() -> None:
    passages = [
        Passage("Mount Cedar is the 23rd-highest peak in the world.", "Mount Cedar"),
        Passage("Mount Dogwood is the 12th highest mountain in the world at 8051 m.", "Mount Dogwood"),
    ]
    question = "Which mountain is higher, Mount Cedar or Mount Dogwood?"
    assert compare_options(question, ("Mount Cedar", "Mount Dogwood"), passages) is None


def test_a_chinese_rank_is_not_a_size() -> None:
    passages = [
        Passage("甲山是世界第13高峰，海拔8035米。", "甲山"),
        Passage("乙山海拔7205米，是世界第106高峰。", "乙山"),
    ]
    compared = compare_options("甲山和乙山哪个更高？", ("甲山", "乙山"), passages)
    assert compared is not None and compared.option == "甲山", compared
