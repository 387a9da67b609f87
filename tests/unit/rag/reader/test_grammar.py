from rag.reader import grammar
from rag.reader.grammar import zh


def test_latin_and_cyrillic_entries_are_whole_words_and_a_dash_ends_a_stem():
    assert grammar.says("Is it longer than the bridge?", ("than",))
    assert not grammar.says("Is it the thankless task?", ("than",))
    assert grammar.find("Это самый первый мост", ("первы-",)) == [(10, 16)]
    assert not grammar.says("Он пришёл домой", ("до",))
    assert grammar.says("Построен ли мост до войны?", ("до",))


def test_chinese_entries_stand_anywhere_and_than_needs_its_comparative():
    assert grammar.says("两座桥都在澄湾吗", grammar.words("BOTH"))
    assert zh.than_spans("甲桥比乙桥早建成吗", zh.THAN_EARLIER) == [(2, 6)]
    assert zh.than_spans("这场比赛早就结束了", zh.THAN_EARLIER) == []
    assert grammar.comparative("甲桥比乙桥长吗", "MORE") and not grammar.comparative("甲桥比乙桥长吗", "LESS")


def test_units_open_a_value_and_areas_come_before_lengths():
    factor = next(f for entries, f in grammar.UNITS if grammar.opens_with("km² of forest", entries))
    assert factor == 1e6
    assert next(f for entries, f in grammar.UNITS if grammar.opens_with("kilometres long", entries)) == 1e3
    assert not any(grammar.opens_with("many people", entries) for entries, _ in grammar.UNITS)
