"""Language identification and offset-exact sentence splitting."""

from __future__ import annotations

import random

import pytest

from stores import text as text_module
from stores.text import detect_language, normalize_language, sentence_spans, split_sentences


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        ("The bridge over the river was finished in the spring of 1890 after six years of work.", "en"),
        ("Мост через реку был построен весной 1890 года после шести лет работы.", "ru"),
        ("这座横跨河流的大桥于1890年春天建成，施工历时六年。", "zh"),
        ("钱学森在哪里出生？", "zh"),
        ("谁赢得了 2019 年 Halvmere Open 网球锦标赛？", "zh"),  # more Latin letters than Han: py3langid decides
        ("誰贏得了 2019 年 Halvmere Open 網球錦標賽？", "zh"),  # the same in traditional characters
        ("Кто основал институт физических проблем?", "ru"),
        ("Who founded the institute?", "en"),
        ("東京は日本の首都です。", "ja"),
        ("Der Fluss fließt langsam durch die alte Stadt und dann weiter bis zum Meer.", "de"),
    ],
)
def test_detect_language(sample: str, expected: str) -> None:
    assert detect_language(sample) == expected


def test_short_text_takes_its_writing_systems_default() -> None:
    # py3langid alone calls these 'sr' and 'br'; a one-word query must not be routed to Serbian or Breton.
    assert detect_language("Капица") == "ru"
    assert detect_language("Paris") == "en"
    assert detect_language("Привіт, як справи") == "uk"


@pytest.mark.parametrize("sample", ["", "   \n", "12345 -- 678", "!!!"])
def test_text_without_letters_is_undetermined(sample: str) -> None:
    assert detect_language(sample) == "und"


def test_normalize_language() -> None:
    assert normalize_language("zh-CN") == "zh"
    assert normalize_language("yue") == "zh"
    assert normalize_language("ru_RU") == "ru"
    assert normalize_language(None) == "und"


def test_english_sentences_respect_abbreviations() -> None:
    text = 'Dr. Smith went to Washington D.C. in 1999. He said: "It is great!" Then he left.'
    assert split_sentences(text, "en") == [
        "Dr. Smith went to Washington D.C. in 1999.",
        'He said: "It is great!"',
        "Then he left.",
    ]


def test_russian_sentences_respect_abbreviations() -> None:
    text = "Мост открыли в 1890 г. в Москве. Т.е. строили его шесть лет! А кто был инженером?\nНеизвестно."
    assert split_sentences(text, "ru") == [
        "Мост открыли в 1890 г. в Москве.",
        "Т.е. строили его шесть лет!",
        "А кто был инженером?",
        "Неизвестно.",
    ]


def test_chinese_sentences_split_on_full_width_marks_and_newlines() -> None:
    text = "长江是中国最长的河流。它流经哪些城市？他说：“很多！”然后；结束\n新的一行"
    assert split_sentences(text, "zh") == [
        "长江是中国最长的河流。", "它流经哪些城市？", "他说：“很多！”", "然后；", "结束", "新的一行",
    ]


def test_markdown_headings_and_list_items_are_their_own_sentences() -> None:
    text = "# Bridges of Paris\nThe Pont Neuf is old.\n- Pont Neuf\n- Pont Royal\n\nLast line without a stop"
    assert split_sentences(text, "en") == [
        "# Bridges of Paris", "The Pont Neuf is old.", "- Pont Neuf", "- Pont Royal", "Last line without a stop",
    ]


def test_language_without_a_dedicated_splitter_uses_punctuation() -> None:
    assert split_sentences("Sveiki. Kaip sekasi? Gerai, ačiū.", "lt") == ["Sveiki.", "Kaip sekasi?", "Gerai, ačiū."]


def test_spans_are_offsets_of_the_returned_sentences() -> None:
    text = "  First one.   Second one!\n\n  Third?  "
    spans = sentence_spans(text, "en")
    assert [text[start:end] for start, end in spans] == ["First one.", "Second one!", "Third?"]


def _assert_partition(text: str, spans: list[tuple[int, int]]) -> None:
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end
        assert not text[start].isspace() and not text[end - 1].isspace()
        assert text[previous_end:start].strip() == "", "non-space text fell between sentences"
        previous_end = end
    assert text[previous_end:].strip() == ""


@pytest.mark.parametrize("language", ["en", "ru", "zh", "de", "und"])
def test_random_text_is_fully_covered(language: str) -> None:
    rng = random.Random(7)
    vocabulary = ["river", "мост", "桥梁", "Dr.", "D.C.", "т.е.", "3.14", "!", "?", "。", "；", "\n", "\n\n",
                  "# Head", "- item", '"quoted."', "  ", "…", "e.g.", "Город", "城市。"]
    for _ in range(30):
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 80)))
        _assert_partition(text, sentence_spans(text, language))


@pytest.mark.parametrize("language", ["en", "ru", "zh"])
def test_long_inputs_are_fed_to_splitters_in_bounded_blocks(language: str) -> None:
    # pysbd slows down badly on long strings; a 100k-character paragraph must reach it in small windows.
    sentence = {"en": "The river runs past the old mill and the town. ", "ru": "Река течёт мимо старой мельницы. ",
                "zh": "河流从古老的磨坊和小镇旁边流过。"}[language]
    text = (sentence * (100_000 // len(sentence) + 1))[:100_000]
    blocks = text_module._blocks(text)
    assert max(end - start for start, end in blocks) <= 2000
    spans = sentence_spans(text, language)
    _assert_partition(text, spans)
    assert len(spans) >= 100_000 // len(sentence) - len(blocks)


def test_text_without_any_break_is_still_covered() -> None:
    text = "x" * 5000 + " " + "y" * 10
    _assert_partition(text, sentence_spans(text, "en"))


def test_each_table_row_is_a_sentence_of_its_own() -> None:
    from stores.text import sentence_spans

    text = "Stations:\n| Station | Opened |\n|---|---|\n| Tarn | 1901 |\n| Wick | 1902 |\nAll are open."
    assert [text[s:e] for s, e in sentence_spans(text, "en")] == [
        "Stations:", "| Station | Opened |", "|---|---|", "| Tarn | 1901 |", "| Wick | 1902 |", "All are open."]


def test_the_unpacked_language_model_classifies_as_py3langids_own(tmp_path, monkeypatch):
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from stores import text

    monkeypatch.setenv("CRAGRAPH_CACHE_DIR", str(tmp_path))
    text._read_identifier.cache_clear()
    try:
        ours = text.language_identifier()
        assert list((tmp_path / "models").glob("py3langid-*.npz"))  # read from the unpacked copy, not the fallback
    finally:
        text._read_identifier.cache_clear()
    theirs = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    for sample in ("Who founded the Radium Institute?", "Кто руководил проектом?", "禾丰电器现任总经理毕业于哪所大学",
                   "Der Fluss fließt durch die Stadt.", "x"):
        assert ours.classify(sample) == theirs.classify(sample)
