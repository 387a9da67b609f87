"""Comparative questions answered from one value per option, the options parsed as the reader parses them."""

import pytest

from rag.answering.rules.compare import Compared, compare_options, comparison_kind
from rag.reader.questions import question_form
from rag.reader.types import Passage


def _compare(question: str, language: str, passages: list[Passage]) -> Compared | None:
    form = question_form(question, language)
    assert form.kind == "options", form
    return compare_options(question, form.options, passages)


def test_a_rank_or_a_numbered_name_is_not_a_size() -> None:
    passages = [
        Passage("Mount Skarn, marked V2 on the survey map, is the 3rd highest peak of the Tollan range at 3140 m.",
                "Mount Skarn"),
        Passage("Mount Ostrel is a peak of the same range. At an elevation of 2875 m it is the 14th highest.",
                "Mount Ostrel"),
    ]
    compared = _compare("Which mountain is taller, Mount Skarn or Mount Ostrel?", "en", passages)
    assert compared is not None and compared.option == "Mount Skarn", compared
    assert compared.values == (3140.0, 2875.0)


def test_the_other_options_name_holds_no_value() -> None:
    # on the Corvo 3's page the sentence that speaks of a price names the Corvo 2: its "2" is no price of either
    passages = [Passage("The Corvo 3 went on sale at £59. It replaced the Corvo 2, which was priced at £45.",
                        "Corvo 3"),
                Passage("The Corvo 2 kettle was priced at £45.", "Corvo 2")]
    compared = _compare("Which is cheaper, the Corvo 2 or the Corvo 3?", "en", passages)
    assert compared is None or compared.option == "the Corvo 2", compared


def test_a_passage_that_gives_only_a_rank_leaves_the_answer_to_the_reader() -> None:
    passages = [
        Passage("Mount Kessa is the 5th-highest peak of the Tollan range.", "Mount Kessa"),
        Passage("Mount Lunevar is the 2nd highest peak of the Tollan range at 3205 m.", "Mount Lunevar"),
    ]
    assert _compare("Which mountain is higher, Mount Kessa or Mount Lunevar?", "en", passages) is None


@pytest.mark.parametrize(
    ("language", "question", "first", "second"),
    [
        ("zh", "哪座山更高，斯卡恩峰还是奥斯特尔峰？", "斯卡恩峰是托兰山脉第3高峰，海拔3140米。",
         "奥斯特尔峰海拔2875米，是托兰山脉第14高峰。"),
        (
            "ru",
            "Какая гора выше, Скарн или Остерль?",
            "Скарн — 3-я по высоте вершина хребта Толлан, её высота 3140 м.",
            "Остерль — горная вершина высотой 2875 м.",
        ),
    ],
)
def test_a_chinese_or_russian_rank_is_not_a_size(language: str, question: str, first: str, second: str) -> None:
    form = question_form(question, language)
    passages = [Passage(first, form.options[0]), Passage(second, form.options[1])]
    compared = _compare(question, language, passages)
    assert compared is not None and compared.option == form.options[0], compared


def test_an_option_without_its_own_page_is_not_compared_or_chosen_by_a_rule() -> None:
    tolley = Passage("The River Tolley is 64 km long and joins the Caldry at Brackwater.", "River Tolley")
    mention = Passage("Anglers who fish the Tolley often drive on to the Wenning Beck, a short moorland stream.",
                      "Moorland angling guide")
    question = "Which is longer, the Wenning Beck or the River Tolley?"
    # the guide merely mentions the beck: it says nothing of its length, so there is nothing to compare
    assert _compare(question, "en", [tolley, mention]) is None

    from rag.answering.rules import read_ranked
    from rag.reader.cache import load_reader

    read = read_ranked(load_reader(), question, [tolley, mention], "en", top=1)
    assert not read or not read[0].rule  # no "A or B" rule: the span readings and the decision take it
    beck = Passage("The Wenning Beck is a moorland stream 9 km long.", "Wenning Beck")
    both = read_ranked(load_reader(), question, [tolley, beck], "en", top=1)
    assert both and both[0].rule == "compared" and "Tolley" in both[0].text


@pytest.mark.parametrize(("question", "kind"), [
    ("Лесная длиннее Ирмы?", "yesno"),  # no "ли", no question word: yes or no all the same
    ("Правда ли, что Ирма впадает в Лесную?", "yesno"),
    ("Мост длиннее, чем 500 метров?", "yesno"),
    ("Где родилась Вера Ланская?", "span"),
    ("Какая река течёт через Ирмовск?", "span"),
    ("Сколько человек живёт в Ирмовске?", "span"),
    ("Чем известна Вера Ланская?", "span"),
    ("С чем граничит Ирмовский район?", "span"),
    ("Насколько Лесная длиннее Ирмы?", "span"),
    ("Чьи картины висят в музее Ирмовска?", "span"),
    ("Назовите приток Ирмы?", "span"),
    ("Where does the Irma flow?", "span"),  # not Russian, whatever language it is tagged
])
def test_a_russian_question_without_a_question_word_asks_yes_or_no(question: str, kind: str) -> None:
    assert question_form(question, "ru").kind == kind


@pytest.mark.parametrize("question", ["兰舟号和白帆号，哪艘船更长？", "晨光S1和晨光S2哪款先推出？",
                                      "兰舟号和白帆号谁更早下水？"])
def test_a_chinese_which_of_two_takes_any_measure_word(question: str) -> None:
    assert question_form(question, "zh").kind == "options"
    assert question_form("兰舟镇有哪些河流？", "zh").kind == "span"


def test_sizes_in_other_units_are_compared_in_one_measure() -> None:
    passages = [Passage("The Ashwater flows 148 km from the moor to the sea.", "Ashwater"),
                Passage("The Brenna is a longer river: 100 miles from source to mouth.", "Brenna")]
    compared = _compare("Which river is longer, the Ashwater or the Brenna?", "en", passages)
    assert compared is not None and compared.option == "the Brenna", compared


@pytest.mark.parametrize(("question", "language", "first", "second", "winner"), [
    ("Which town has more inhabitants, Harlow Cross or Pendry?", "en",
     "Harlow Cross, founded in 1820, is a market town with a population of 12,400.",
     "Pendry was first mentioned in 1402. It has about 8,100 residents.", "Harlow Cross"),
    ("Which costs more, the Corvo 2 or the Corvo 3?", "en",
     "The Corvo 2 kettle was launched in 2019 and sells for £45.",
     "The Corvo 3 kettle, launched in 2021, costs £39.", "Corvo 2"),
    ("Какой чайник дешевле: «Вьюга» или «Метель»?", "ru",
     "Чайник «Вьюга» выпускается с 2015 года, цена — 2990 рублей.",
     "Чайник «Метель» (2018) стоит 3450 рублей.", "Вьюга"),
    ("青溪镇和白石镇哪个人口更多？", "zh", "青溪镇建于1650年，人口约3.1万。", "白石镇人口约1.8万，以石材闻名。",
     "青溪镇"),
])
def test_populations_and_prices_are_compared(question: str, language: str, first: str, second: str,
                                             winner: str) -> None:
    form = question_form(question, language)
    passages = [Passage(first, form.options[0]), Passage(second, form.options[1])]
    compared = _compare(question, language, passages)
    assert compared is not None and compared.option.removeprefix("the ") == winner, compared


def test_an_option_without_a_page_is_read_where_another_page_names_it_with_the_attribute() -> None:
    pages = [
        Passage("MV Harebell is a coastal ferry built by Dunmore Yard and launched in 1951. Her sister ship, the MV "
                "Foxglove, was launched in 1949 and served the same crossing.", "MV Harebell"),
        Passage("Dunmore Yard employed 900 people in 1950 and built ferries for the island routes.", "Dunmore Yard"),
    ]
    compared = _compare("Which was launched first, MV Harebell or MV Foxglove?", "en", pages)
    assert compared is not None and compared.option == "MV Foxglove", compared
    # a sentence naming the option but not the attribute gives it no value
    pages[0] = Passage("MV Harebell was launched in 1951. The MV Foxglove, refitted in 1980, ran the same crossing.",
                       "MV Harebell")
    assert _compare("Which was launched first, MV Harebell or MV Foxglove?", "en", pages) is None


@pytest.mark.parametrize(("question", "found"), [
    ("临溪比青河长吗？", ("size", 1)),
    ("青松T5比青松T3便宜吗？", ("size", -1)),
    ("望江楼比听雨阁早建成吗？", ("time", -1)),
    ("这场比赛有多长？", None),  # 比赛 is a match, not "than"
])
def test_a_chinese_comparison_by_than_names_its_measure(question: str, found: tuple[str, int] | None) -> None:
    assert comparison_kind(question) == found
