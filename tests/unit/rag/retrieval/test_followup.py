"""The rule that turns a thread's follow-up question into a standalone one (rag.retrieval.followup)."""

from __future__ import annotations

import pytest

from rag.retrieval.followup import is_followup, key_entity, resolve

DIRECTOR = "Who was the first director of the Institute for Physical Problems?"


@pytest.mark.parametrize(
    ("question", "previous", "answer", "expected"),
    [
        # he/she: the previous answer when it is a name
        ("and where was he born?", DIRECTOR, "Pyotr Kapitsa [1]", "Where was Pyotr Kapitsa born?"),
        ("Where was he born?", DIRECTOR, "Pyotr Kapitsa [1]", "Where was Pyotr Kapitsa born?"),
        ("and what did she found?", "Who discovered polonium?", "Marie Curie [1]", "What did Marie Curie found?"),
        # it: the previous question's subject
        ("and when was it founded?", DIRECTOR, "Pyotr Kapitsa [1]",
         "When was Institute for Physical Problems founded?"),
        # he, but the answer is no name (a date): the previous question's subject
        ("and where did he die?", "When was Pyotr Kapitsa born?", "1894 [1]", "Where did Pyotr Kapitsa die?"),
        # "what about X?": the previous question about X
        ("What about Moscow?", "What is the population of Paris?", "2.1 million [1]",
         "What is the population of Moscow?"),
        # a connector and no pronoun: the subject appended
        ("and the population?", "Where is Paris?", "France [1]", "The population Paris?"),
        ("а где он родился?", "Кто был первым директором Института физических проблем?", "Пётр Капица [1]",
         "Где Пётр Капица родился?"),
        ("他出生在哪里？", "物理问题研究所的第一任所长是谁？", "卡皮察 [1]", "卡皮察出生在哪里？"),
        ("那他出生在哪里？", "物理问题研究所的第一任所长是谁？", "卡皮察 [1]", "卡皮察出生在哪里？"),
        # traditional characters: the same rules, the question kept in its script
        ("那麼他們住在哪裡？", "物理問題研究所的第一任所長是誰？", "卡皮察 [1]", "卡皮察住在哪裡？"),
        ("還有創辦時間？", "物理問題研究所的第一任所長是誰？", "卡皮察 [1]",
         "物理問題研究所的第一任所長是誰創辦時間？"),
    ],
)
def test_a_follow_up_is_rewritten_against_the_previous_turn(question, previous, answer, expected):
    resolution = resolve(question, previous, answer)
    assert resolution.question == expected
    assert resolution.rewritten and resolution.how.startswith("rule")


@pytest.mark.parametrize(
    "question",
    [
        "Who discovered polonium?",  # no connector, no pronoun
        "Where was Kapitsa born and when did he die?",  # a pronoun, but a name of its own
        "Which river that flows through Kazan and Nizhny Novgorod does it join near Astrakhan?",  # many words
        "Andrew Wiles proved which theorem?",  # starts like "and", is not the word "and"
        "那不勒斯在哪个国家？",  # Naples starts with 那 ("then")
        "其他国家有哪些？",  # 其他 ("other") holds 他 ("he")
    ],
)
def test_a_standalone_question_is_left_as_it_is(question):
    assert not is_followup(question)
    assert resolve(question, DIRECTOR, "Pyotr Kapitsa [1]").question == question


def test_nothing_is_rewritten_without_a_previous_turn_and_an_abstention_is_no_referent():
    assert resolve("and where was he born?", "").question == "and where was he born?"
    abstained = resolve("and where was he born?", DIRECTOR, "", answered=False)
    assert abstained.question == "Where was Institute for Physical Problems born?"
    assert key_entity(DIRECTOR) == "Institute for Physical Problems"


BERLIN_HEAD = "Who is the head of the Berlin office?"
ANNA_BORN = "Where was Anna Schmidt born?"  # "Where was she born?" after BERLIN_HEAD, as the rule resolved it
OFFICE_THREAD = [(BERLIN_HEAD, "Anna Schmidt [1]")]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the counterpart of what the earlier question named: the earlier role, with X
        ("What about the Austin office?", "Where was the head of the Austin office born?"),
        ("and what about the Austin office?", "Where was the head of the Austin office born?"),
        # a person's counterpart: X in the person's place
        ("What about Carlos Ruiz?", "Where was Carlos Ruiz born?"),
        # fits neither a person nor the role: asked as it was, never "Where was the weather born?"
        ("What about the weather?", "What about the weather?"),
        ("What about the Austin warehouse?", "What about the Austin warehouse?"),
    ],
)
def test_what_about_keeps_the_predicate_only_where_x_fits(question, expected):
    resolution = resolve(question, ANNA_BORN, "Hamburg [1]", earlier=OFFICE_THREAD)
    assert resolution.question == expected
    assert resolution.rewritten == (expected != question)


def test_what_about_a_thing_keeps_the_predicate_when_the_subject_was_no_answered_person():
    earlier = [("Who founded the Radium Institute?", "Marie Curie [1]")]
    resolution = resolve("What about Moscow?", "What is the population of Paris?", "2.1 million [1]", earlier=earlier)
    assert resolution.question == "What is the population of Moscow?"
