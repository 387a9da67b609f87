"""Candidates: what one stands on, when it answers about a look-alike of what the question names, and when an
answer names a page's entity."""

from __future__ import annotations

from rag.answering import Candidate
from rag.answering.candidates import about_a_look_alike, names_same
from rag.reader.types import ReaderAnswer
from stores.tokenize import tokenize


def _candidate(text: str, sentence: str, title: str, rule: str = "") -> Candidate:
    read = ReaderAnswer(text, "span", 0, sentence, 0, len(text), 1.0, margin=5.0, confidence=0.9, rule=rule)
    return Candidate(read, "one_pass", {"id": "p", "title": title, "text": sentence}, 0, [])


ENTITY = [set(tokenize("MV Corriedale"))]


def test_a_look_alikes_page_does_not_answer_for_the_named_entity():
    # the sister ship's page, in a sentence about her alone
    assert about_a_look_alike(_candidate("1934", "She was launched in 1934.", "MV Corriebell"), ENTITY)


def test_a_sentence_naming_the_entity_or_the_entitys_own_page_does():
    named = _candidate("1936", "Her sister ship, MV Corriedale, was launched in 1936.", "MV Corriebell")
    assert not about_a_look_alike(named, ENTITY)
    assert not about_a_look_alike(_candidate("1936", "She was launched in 1936.", "MV Corriedale"), ENTITY)
    # a page whose title shares nothing with the entity (a bridge's second hop) is not a look-alike
    assert not about_a_look_alike(_candidate("1902", "He was born in 1902.", "Edmund Harrow"), ENTITY)
    # a rule's answer (yes / no, "A or B") is decided by the rule
    assert not about_a_look_alike(_candidate("no", "She was launched in 1934.", "MV Corriebell", "yes_no"), ENTITY)


def test_a_page_named_by_part_of_the_entitys_name_or_an_inflected_name_is_no_look_alike():
    scorpions = [set(tokenize("Scorpiones und Pedipalpi"))]
    assert not about_a_look_alike(_candidate("eight", "Scorpions have eight legs.", "Scorpion"), scorpions)
    # the question's entity as its lemma, the text inflected
    lemma = [set(tokenize("евгения ларионов"))]
    born = _candidate("Сулея", "Евгения Ларионова родилась в Сулее.", "Ларионова, Евгения Петровна")
    assert not about_a_look_alike(born, lemma)


def test_a_russian_name_meets_its_page_in_any_case_and_order():
    # the stemmer cuts these case endings unevenly: "сабур" / "сабуров", "павел" / "павл", "горд" / "горде"
    assert names_same("Сабуров, Павел Евграфович", "Павла Евграфовича Сабурова")
    assert names_same("Стрешнев, Гордей Лукич", "Гордеем Лукичом Стрешневым")
    assert names_same("Ветлугина, Анна", "Анны Ветлугиной")


def test_names_that_differ_in_more_than_an_ending_stay_apart():
    assert not names_same("Соколов, Иван Петрович", "Сорокина Ивана Петровича")
    assert not names_same("Чирок-5", "Чирок-7")
    assert not names_same("MV Corriedale", "MV Corriebell")
    assert not names_same("Вельта", "Вельтогорск")  # a river and the town named after it
    # Latin-script terms meet only whole: an ending there is a different name
    assert not names_same("Hollin Star", "Hollis Star")
