"""A yes / no claim is read as the question it hides, and decided by whether that question's answer names the
claimed value."""

import pytest

from rag.answering.rules.hidden_question import Claim, hidden_claim, names_value, within
from rag.reader.types import Passage, ReaderAnswer
from stores.ner import RULES_ENV


@pytest.mark.parametrize(("question", "titles", "language", "value", "hidden"), [
    ("Did Orla Penhallow grow up in Treverrow?", ["Orla Penhallow"], "en", "Treverrow",
     "Where did Orla Penhallow grow up?"),
    ("Did Orla Penhallow design the Marrick Library?", ["Orla Penhallow", "Marrick Library"], "en",
     "Marrick Library", "What did Orla Penhallow design?"),
    ("did orla penhallow study at kestle school of art?", ["Orla Penhallow", "Kestle School of Art"], "en",
     "kestle school of art", "Where did orla penhallow study?"),
    ("Училась ли Вера Гостева в Зареченском педагогическом училище?", ["Гостева, Вера Ильинична"], "ru",
     "Зареченском педагогическом училище", "Где училась Вера Гостева?"),
    ("Правда ли, что Вера Гостева выросла в Ключевске?", ["Гостева, Вера Ильинична"], "ru", "Ключевске",
     "Где Вера Гостева выросла?"),
    ("Выросла ли Вера Гостева в селе Тихий Брод?", ["Гостева, Вера Ильинична"], "ru", "Тихий Брод",
     "Где выросла Вера Гостева?"),
    ("柏云舒是在临溪县长大的吗？", ["柏云舒"], "zh", "临溪县", "柏云舒是在哪里长大的？"),
    ("望江楼是柏云舒设计的吗？", ["望江楼", "柏云舒"], "zh", "柏云舒", "望江楼是谁设计的？"),
    # a person is asked with "who"
    ("Правда ли, что Ключевский мост спроектировал Иван Ронне?", [], "ru", "Иван Ронне",
     "Кто Ключевский мост спроектировал?"),
    # a Russian claim that opens with its subject
    ("Гостева выросла в Ключевске?", [], "ru", "Ключевске", "Где Гостева выросла?"),
])
def test_a_claim_hides_a_question(question: str, titles: list[str], language: str, value: str,
                                  hidden: str) -> None:
    claim = hidden_claim(question, titles, language)
    assert claim is not None
    assert (claim.value, claim.question) == (value, hidden)


def test_a_chinese_name_without_a_page_is_found_by_ner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RULES_ENV)  # the unit tests' rule-based NER finds no Chinese names
    claim = hidden_claim("柏云舒毕业于临溪师范学院吗？", ["柏云舒"], "zh")
    assert claim is not None and (claim.value, claim.question) == ("临溪师范学院", "柏云舒毕业于哪里？")


@pytest.mark.parametrize(("question", "value", "hidden"), [
    ("青松茶社出售绿茶吗？", "绿茶", "青松茶社出售什么？"),
    ("柏云舒的母亲是教师吗？", "教师", "柏云舒的母亲是什么？"),
])
def test_a_chinese_value_that_is_no_name_is_the_object_of_the_last_verb(monkeypatch: pytest.MonkeyPatch,
                                                                          question: str, value: str,
                                                                          hidden: str) -> None:
    monkeypatch.delenv(RULES_ENV)  # LAC's word tags
    claim = hidden_claim(question, ["青松茶社", "柏云舒"], "zh")
    assert claim is not None and (claim.value, claim.question) == (value, hidden)


def test_a_claim_without_a_value_after_its_subject_hides_nothing() -> None:
    assert hidden_claim("Is Orla Penhallow still working?", ["Orla Penhallow"], "en") is None
    assert hidden_claim("Is it open on Sundays?", [], "en") is None


def test_a_place_inside_the_claimed_one_holds_the_claim() -> None:
    page = Passage("The studio has its workshop on Ferry Row in Marrick, near the old harbour.", "Penhallow Studio")
    at = page.text.index("Ferry Row")
    answer = ReaderAnswer("Ferry Row", "span", 0, page.text, at, at + len("Ferry Row"), 1.0)
    assert within(answer, [page], "Marrick")
    assert not within(answer, [page], "Polwenna")


def test_a_value_is_named_in_any_inflection_but_not_by_a_neighbour() -> None:
    assert names_value("Зареченское педагогическое училище", "Зареченском педагогическом училище")
    assert names_value("the Marrick Library", "Marrick Library")
    assert names_value("临溪县城", "临溪县")
    assert not names_value("Ashcombe", "Treverrow")
    assert not names_value("临江市", "临溪县")


PENHALLOW = Passage(
    "Orla Penhallow (born 1961) is an architect. She was born in Ashcombe, a fishing village, but her family "
    "moved when she was four and she grew up in Treverrow, where her father kept the lighthouse. She now "
    "lives in Polwenna. Her best-known building is the Marrick Library (1998).",
    "Orla Penhallow")
ASHCOMBE = Passage(
    "Ashcombe is a fishing village on the north coast. The painter Jory Menhenick was born in Ashcombe in 1950 "
    "and the village has a small museum of his work.", "Ashcombe")


@pytest.mark.parametrize(("question", "answer"), [
    ("Did Orla Penhallow grow up in Treverrow?", "yes"),
    ("Was Orla Penhallow born in Ashcombe?", "yes"),
    ("Was Orla Penhallow born in Polwenna?", "no"),
    ("Did Orla Penhallow grow up in Ashcombe?", "no"),
    ("was orla penhallow born in ashcombe", "yes"),  # no capitals, no question mark: the value is a page
])
def test_a_claim_is_decided_by_what_the_page_answers_to_its_hidden_question(question: str, answer: str) -> None:
    from rag.answering.rules import read_ranked
    from rag.reader.cache import load_reader

    read = read_ranked(load_reader(), question, [PENHALLOW, ASHCOMBE], "en", top=1)
    assert [r.text for r in read] == [answer]


def test_an_english_claim_whose_value_is_no_name_hides_the_object_of_its_verb() -> None:
    titles = ["Marie Curie", "Tarnholm Bridge"]
    assert hidden_claim("Did Marie Curie discover polonium?", titles, "en") == Claim(
        "polonium", "What did Marie Curie discover?")
    assert hidden_claim("Was the Tarnholm Bridge built in 1742?", titles, "en") == Claim(
        "1742", "When was the Tarnholm Bridge built?")
    assert hidden_claim("Is Tarnholm Bridge a footbridge?", titles, "en") == Claim(
        "footbridge", "What is Tarnholm Bridge?")
