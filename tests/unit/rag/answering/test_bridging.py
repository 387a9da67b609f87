"""The second hop's question of a bridge is the question with what the link answered replaced by the linked page."""

import pytest

from rag.answering.bridging import bridged_question, spoken


@pytest.mark.parametrize(("sentence", "linked_text"), [
    # the named page's title and the relation its linking sentence states ("founded") give way to her name
    ("Brackwater Ceramics was founded in 1994 by Odile Marchetti.",
     "Odile Marchetti was born in Pell Harbour. In 1994 she founded Brackwater Ceramics."),
    # the link says "born" too, but so does her own page, where the asked fact is: it stays in the question
    ("Brackwater Ceramics was founded by Odile Marchetti, who was born abroad.",
     "Odile Marchetti was born in Pell Harbour. She founded Brackwater Ceramics in 1994."),
])
def test_the_named_page_and_its_relation_give_way_to_the_linked_entity(sentence: str, linked_text: str) -> None:
    asked = bridged_question("Where was the founder of Brackwater Ceramics born?", "Brackwater Ceramics", sentence,
                             "Odile Marchetti", linked_text)
    assert asked == "Where was the Odile Marchetti born?"


def test_a_town_where_someone_was_born_becomes_the_town():
    asked = bridged_question(
        "Which lake lies beside the town where Jonas Wetterlund was born?", "Jonas Wetterlund",
        "Jonas Wetterlund was born in Krall in 1962 and studied law.", "Krall",
        "Krall is a town of 9,000 people. It lies on Lake Orsen.")
    assert asked.startswith("Which lake lies beside the town where Krall")
    assert "Wetterlund" not in asked and "born" not in asked


def test_russian_and_chinese_questions_are_bridged_by_roots_and_character_pairs():
    russian = bridged_question(
        "В каком городе родился основатель компании «Брусника»?", "Брусника (компания)",
        "Компанию «Брусника» основал Фёдор Сотников в 2001 году.", "Сотников, Фёдор Ильич",
        "Фёдор Сотников родился в Каменске. В 2001 году он основал «Бруснику».")
    assert russian.startswith("В каком городе родился Сотников, Фёдор Ильич")
    assert "Брусник" not in russian
    chinese = bridged_question(
        "设计临川美术馆的建筑师出生在哪里？", "临川美术馆", "临川美术馆由建筑师顾明远设计。", "顾明远",
        "顾明远出生于白石镇。")
    assert chinese.startswith("顾明远") and chinese.endswith("出生在哪里？")
    assert "临川" not in chinese


def test_a_question_that_holds_none_of_the_named_pages_words_is_asked_as_it_was():
    question = "Where was the founder born?"
    assert bridged_question(question, "Brackwater Ceramics", "Brackwater Ceramics was founded by Odile Marchetti.",
                            "Odile Marchetti", "Odile Marchetti was born in Pell Harbour.") == question


def test_a_catalogue_title_is_asked_in_the_order_its_page_writes_it():
    assert spoken("Ланская, Вера Ильинична", "Вера Ильинична Ланская (1931) — архитектор.") == "Вера Ильинична Ланская"
    assert spoken("Orrin, Tessary", "Orrin, Tessary is a port on the coast.") == "Orrin, Tessary"
    assert spoken("Тальвея (компания)", "Тальвея — компания.") == "Тальвея"
