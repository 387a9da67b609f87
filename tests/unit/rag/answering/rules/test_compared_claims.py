"""Yes / no questions decided from the values of the pages the question names (rules/compared_claims.py)."""

from __future__ import annotations

import pytest

from rag.answering.rules.compared_claims import compared_claim, paired_claim
from rag.reader.names import named_pages
from rag.reader.types import Passage, ReaderAnswer

BRIDGES = [
    Passage("The Marrow Bridge crosses the Tessel at Dunholm.\n- Opened: 1931\n- Length: 640 metres", "Marrow Bridge"),
    Passage("The Dunholm Footbridge opened in 2004. It is 185 metres long and 4 metres wide.", "Dunholm Footbridge"),
    Passage("Dunholm is a market town of 12,000 people on the Tessel.", "Dunholm"),
]


@pytest.mark.parametrize(("question", "holds"), [
    ("Is the Marrow Bridge longer than the Dunholm Footbridge?", True),
    ("Is the Dunholm Footbridge longer than the Marrow Bridge?", False),
    ("Was the Marrow Bridge opened before the Dunholm Footbridge?", True),
    ("Is the Dunholm Footbridge more than 200 metres long?", False),
    ("Is the Marrow Bridge longer than 600 metres?", True),
])
def test_a_comparison_is_decided_by_the_values_of_the_pages_it_names(question, holds):
    decided = compared_claim(question, BRIDGES)
    assert decided is not None and decided[0] is holds


def test_russian_and_chinese_comparisons_name_their_pages_in_any_inflection():
    ru = [Passage("Сулейский мост длиной 820 метров открыт в 1968 году.", "Сулейский мост"),
          Passage("Мост через Тесель длиной 410 метров.", "Тесельский мост")]
    assert compared_claim("Длиннее ли Сулейский мост 700 метров?", ru) == (True, 0)
    assert compared_claim("Правда ли, что Тесельский мост длиннее Сулейского моста?", ru) == (False, 1)
    zh = [Passage("鹤原电视塔高268米，在190米处设有观光平台。", "鹤原电视塔")]
    assert compared_claim("鹤原电视塔的高度超过300米吗？", zh) == (False, 0)
    assert compared_claim("鹤原电视塔的高度超过200米吗？", zh) == (True, 0)


def test_two_names_sharing_a_word_are_compared_in_the_order_the_question_says_them():
    rivers = [Passage("The River Skell runs 42 km from the moors to the sea.", "River Skell"),
              Passage("The River Aldon is 61 km long.", "River Aldon")]
    assert named_pages("Is the River Aldon longer than the River Skell?", [p.title for p in rivers]) == [1, 0]
    assert compared_claim("Is the River Aldon longer than the River Skell?", rivers) == (True, 1)
    assert compared_claim("Is the River Skell longer than the River Aldon?", rivers) == (False, 0)


def test_a_chinese_number_followed_by_its_unit_is_a_size_not_a_year():
    towers = [Passage("临江大桥全长1260米，2009年通车。", "临江大桥")]
    assert compared_claim("临江大桥全长超过1000米吗？", towers) == (True, 0)
    assert compared_claim("临江大桥全长超过1500米吗？", towers) == (False, 0)


def test_a_question_that_compares_nothing_it_names_is_left_to_the_reader():
    assert compared_claim("Is the Marrow Bridge beautiful?", BRIDGES) is None
    assert compared_claim("Is the Orrin Viaduct longer than the Marrow Bridge?", BRIDGES) is None  # no page: no value


PEOPLE = [
    Passage("Priya Holt (born 1983) founded Thistle Analytics. Holt was born in Dunholm, where her parents ran a shop.",
            "Priya Holt"),
    Passage("Oskar Fell (1929-2012) was an architect. Fell was born in Dunholm, the son of a clock maker.",
            "Oskar Fell"),
    Passage("Mira Stens was born in Kessa. Her colleague Edvin Rask was born in Dunholm.", "Mira Stens"),
    Passage("Dunholm is a market town on the Tessel.", "Dunholm"),
]


def test_both_holds_when_each_page_says_the_value_where_it_speaks_of_the_rest():
    assert paired_claim("Were Priya Holt and Oskar Fell both born in Dunholm?", PEOPLE, []) == (True, 0)
    # her page names Dunholm as a colleague's birthplace, in a sentence of his
    assert paired_claim("Were Priya Holt and Mira Stens both born in Dunholm?", PEOPLE, []) == (False, 0)
    # a page the question names apart from the pair is not one of the pair
    assert paired_claim("Were Priya Holt, born in Dunholm, and Oskar Fell both architects?", PEOPLE, []) is None


def test_the_same_holds_when_the_spans_of_the_two_pages_name_one_thing():
    pages = [Passage("Лесницкая родилась в Верхнеборске в 1951 году.", "Лесницкая, Варвара Петровна"),
             Passage("Злата Подберезина родилась в городе Верхнеборск, окончила институт в Заречье.",
                     "Подберезина, Злата Игоревна")]
    spans = [ReaderAnswer("Верхнеборске", "span", 0, pages[0].text, 0, 0, 1.0),
             ReaderAnswer("Заречье", "span", 1, pages[1].text, 0, 0, 0.9),
             ReaderAnswer("городе Верхнеборск", "span", 1, pages[1].text, 0, 0, 0.8)]
    asked = "Правда ли, что Варвара Лесницкая и Злата Подберезина родились в одном городе?"
    assert paired_claim(asked, pages, spans) == (True, 0)
    assert paired_claim(asked, pages, spans[:2]) == (False, 0)


def test_named_pages_come_in_the_order_the_question_names_them_one_per_entity():
    titles = ["Dunholm", "Dunholm Footbridge", "Marrow Bridge", "River Marrow"]
    assert named_pages("Is the Marrow Bridge longer than the Dunholm Footbridge?", titles) == [2, 1]
    assert named_pages("Кто старше: Мирон Калугин или Илья Стрельников?",
                       ["Стрельников, Илья Павлович", "Калугин, Мирон Сергеевич"]) == [1, 0]

