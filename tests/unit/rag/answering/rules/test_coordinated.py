"""Russian and Chinese yes / no claims about two joined subjects, split into one claim per subject
(rag.answering.rules.coordinated)."""

from __future__ import annotations

import pytest

from rag.answering.rules.coordinated import coordinated
from rag.reader.types import Passage
from stores.ner import RULES_ENV


@pytest.mark.parametrize(("question", "language", "split"), [
    ("Правда ли, что Марина Лисова и Пётр Восков родились в одном и том же городе?", "ru",
     (("Где родились Марина Лисова?", "Где родились Пётр Восков?"), True)),
    ("Марина Лисова и Пётр Восков оба окончили Верхнеборский университет?", "ru",
     (("Марина Лисова окончили Верхнеборский университет?",
                  "Пётр Восков окончили Верхнеборский университет?"), False)),
    ("Находятся ли и старая мельница, и Дом купца Рябова в Заречье?", "ru",
     (("Находятся ли старая мельница в Заречье?", "Находятся ли Дом купца Рябова в Заречье?"), False)),
    ("Правда ли, что и «Светоч», и фабрика «Заря» основаны до 1950 года?", "ru",
     (("«Светоч» основаны до 1950 года?", "фабрика «Заря» основаны до 1950 года?"), False)),
])
def test_a_claim_about_two_subjects_is_one_claim_of_each(question: str, language: str,
                                                        split: tuple[tuple[str, str], bool]) -> None:
    found = coordinated(question, language)
    assert found is not None and (found.parts, found.same) == split


@pytest.mark.parametrize(("question", "split"), [
    ("林晓岚和周启明都毕业于江城大学吗？",
     (("林晓岚毕业于江城大学吗？", "周启明毕业于江城大学吗？"), False)),
    ("林晓岚和周启明出生在同一个镇吗？", (("林晓岚出生在哪个镇？", "周启明出生在哪个镇？"), True)),
])
def test_a_chinese_claim_about_two_subjects_is_split_by_word_tags(monkeypatch: pytest.MonkeyPatch, question: str,
                                                                   split: tuple[tuple[str, str], bool]) -> None:
    monkeypatch.delenv(RULES_ENV)  # LAC's word tags
    found = coordinated(question, "zh")
    assert found is not None and (found.parts, found.same) == split


def test_the_subjects_are_named_as_the_question_writes_them() -> None:
    found = coordinated("Находятся ли и старая мельница, и Дом купца Рябова в Заречье?", "ru")
    assert found is not None and found.subjects == ("старая мельница", "Дом купца Рябова")


@pytest.mark.parametrize(("question", "language"), [
    ("Were Maren Lisle and Peter Vosk both born in Harrowgate?", "en"),  # English: claims.paired_claim
    ("Правда ли, что Марина Лисова родилась в Заречье?", "ru"),
    ("Марина Лисова и её брат родились в Заречье?", "ru"),  # "её брат" is no subject a page is about
])
def test_a_claim_of_one_subject_or_of_a_relation_is_not_split(question: str, language: str) -> None:
    assert coordinated(question, language) is None


LISOVA = Passage("Марина Лисова (род. 1958) — гончар. Родилась в Заречье, училась в Верхнеборске.", "Марина Лисова")
VOSKOV = Passage("Пётр Восков (род. 1961) — стеклодув. Он родился в Заречье. Сейчас живёт в Дубравске.", "Пётр Восков")
KHALIN = Passage("Тимофей Халин — ткач, родился в Верхнеборске в 1970 году. В 1995 году переехал в Заречье.",
                 "Тимофей Халин")


@pytest.mark.parametrize(("question", "answer"), [
    ("Марина Лисова и Пётр Восков обе родились в Заречье?", "да"),
    ("Марина Лисова и Тимофей Халин оба родились в Заречье?", "нет"),
    ("Правда ли, что Марина Лисова и Пётр Восков родились в одном городе?", "да"),
    ("Правда ли, что Марина Лисова и Тимофей Халин родились в одном городе?", "нет"),
])
def test_a_joined_claim_is_decided_by_each_subject_read_alone(question: str, answer: str) -> None:
    from rag.answering.rules import read_ranked
    from rag.reader.cache import load_reader

    read = read_ranked(load_reader(), question, [LISOVA, VOSKOV, KHALIN], "ru", top=1)
    assert [r.text for r in read] == [answer]
