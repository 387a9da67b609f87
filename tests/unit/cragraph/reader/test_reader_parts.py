"""Fast unit tests of the reader's model-free parts ."""

import numpy as np

from cragraph.reader.decode import best_spans, clean_span
from cragraph.reader.questions import question_form
from cragraph.reader.types import Passage
from cragraph.reader.window import build_context


def test_question_forms() -> None:
    assert question_form("Are Medici and Senet both board games?", "en").kind == "yesno"
    assert question_form("Who is the oldest, Sid Haig or Vic Darchinyan?", "en").options == (
        "Sid Haig",
        "Vic Darchinyan",
    )
    assert question_form("Which band was formed first The Exies or Circus Diablo ?", "en").options == (
        "The Exies",
        "Circus Diablo",
    )
    assert question_form("Is the focus on mentorship high or low?", "en").kind == "span"
    assert question_form("who played lead guitar on 25 or 6 to 4", "en").kind == "span"
    assert question_form("Вступила ли Норвегия в 1972 году в Европейский союз?", "ru").kind == "yesno"
    assert question_form("1972年挪威最后加入了欧盟吗？", "zh").kind == "yesno"
    assert question_form("哪项法令的条款是否设定界限？", "zh").kind == "span"


def test_context_maps_back_to_passages() -> None:
    passages = [
        Passage("Paris is the capital of France. It is large.", "Paris"),
        Passage("Berlin is the capital of Germany.", "Berlin"),
    ]
    ctx = build_context("What is the capital of Germany?", passages, "en", 100, lambda s: len(s.split()))
    i = ctx.text.index("Germany")
    segment, start, end = ctx.locate(i, i + len("Germany"))
    assert segment.passage == 1 and passages[1].text[start:end] == "Germany"
    j = ctx.text.index("Berlin")  # the title comes first
    assert ctx.locate(j, j + 6)[0].in_title


def test_best_span_and_cleaning() -> None:
    start = np.array([0, 0, 5, 0, 0.0])
    end = np.array([0, 0, 0, 4, 8.0])
    assert best_spans(start, end, 1, 5, max_tokens=2)[0][:2] == (2, 3)
    text = ' "Rush", '
    assert text[slice(*clean_span(text, 0, len(text)))] == "Rush"


def test_support_needs_the_answer_words_in_the_cited_passages() -> None:
    from cragraph.reader.support import is_supported

    passages = ["The Volga flows into the Caspian Sea.", "Kazan stands on the Volga."]
    assert is_supported("the Caspian Sea", passages)
    assert not is_supported("the Black Sea near Odessa", passages)
    assert is_supported("Каспийское море", ["Волга впадает в Каспийское море."])
