"""The script-routed tokenizer: stems per language, bigrams for CJK, stopwords out, numbers kept."""

from stores.tokenize import query_terms, tokenize


def test_russian_inflections_share_one_term():
    forms = ["книга", "книги", "книгу", "книгой", "книгах"]
    terms = {tuple(tokenize(form)) for form in forms}
    assert len(terms) == 1 and len(next(iter(terms))) == 1


def test_russian_question_matches_inflected_passage_words():
    question = set(tokenize("Сколько голов пропустила защита?"))
    passage = set(tokenize("Защиту «Серых волков» хвалили: за сезон она пропустила всего 18 голов."))
    assert {tokenize("защита")[0], tokenize("голов")[0], tokenize("пропустила")[0]} <= question & passage


def test_english_is_stemmed_and_stopwords_dropped():
    assert tokenize("The runners were running") == tokenize("runner run")
    assert tokenize("the of and is") == []


def test_russian_stopwords_dropped_and_yo_folded():
    assert tokenize("и в на что") == []
    assert tokenize("ёлка") == tokenize("елка")


def test_digits_kept_and_underscores_split():
    assert tokenize("Harbour_Cup_50 in 2016") == ["harbour", "cup", "50", "2016"]


def test_chinese_becomes_character_bigrams():
    assert tokenize("灰狼队") == ["灰狼", "狼队"]
    assert tokenize("狼") == ["狼"]
    # Punctuation separates runs: no bigram crosses it.
    assert "队防" not in tokenize("灰狼队，防守")


def test_mixed_text_routes_each_token_by_script():
    terms = tokenize("Running бегущих 跑步 42")
    assert terms == ["run", tokenize("бегущих")[0], "跑步", "42"]
    assert tokenize("бегущих")[0] != "бегущих"


def test_cjk_glued_to_latin_or_digits_is_split():
    assert tokenize("5月iPhone") == ["5", "月", "iphon"]


def test_empty_and_punctuation_only():
    assert tokenize("") == []
    assert tokenize(" ,.;!? — ") == []


def test_a_chinese_query_searches_with_both_scripts_and_other_queries_as_they_are():
    assert query_terms("鋼鐵隊") == ["鋼鐵", "鐵隊", "钢铁", "铁队"]
    assert query_terms("钢铁队") == ["钢铁", "铁队", "鋼鐵", "鐵隊"]
    assert query_terms("在半") == ["在半"]  # written alike in both scripts: nothing added
    assert query_terms("Running бегущих 42") == tokenize("Running бегущих 42")
