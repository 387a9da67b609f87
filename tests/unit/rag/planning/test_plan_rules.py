"""Rule-based decomposition: bridge chains and comparisons become valid DAGs; other questions get none."""

from __future__ import annotations

import pytest

from rag.planning.entities import entity_candidates, named_entities
from rag.planning.plan import validate_decomposition
from rag.planning.rules import rule_decomposition
from stores.ner import RULES_ENV


def test_a_relative_clause_becomes_a_two_hop_slot_chain():
    plan = rule_decomposition("Who was the first president of the society which publishes the Keldmoor Review?")
    assert [(q.text, q.slot, q.deps) for q in plan.sub_questions] == [
        ("the society which publishes the Keldmoor Review", "x1", []),
        ("Who was the first president of {x1}?", None, ["q1"]),
    ]
    assert validate_decomposition(plan) == []


@pytest.mark.parametrize(("question", "first", "then"), [
    ("When was the botanist who named the Orrel pine born?", "the botanist who named the Orrel pine",
     "When was {x1} born?"),
    ("Which school did the potter who glazed the Tamsin vase attend?", "the potter who glazed the Tamsin vase",
     "Which school did {x1} attend?"),
    ("In what year was the guild that Ada Wren co-founded dissolved?", "the guild that Ada Wren co-founded",
     "In what year was {x1} dissolved?"),
    # the clause's own verb ends it: nothing is the question's
    ("How wide is the canal that Ada Wren's mill overlooked?", "the canal that Ada Wren's mill overlooked",
     "How wide is {x1}?"),
    ("In which town was the mill that built the Tamsin Loom?", "the mill that built the Tamsin Loom",
     "In which town was {x1}?"),
])
def test_the_verb_after_an_inverted_auxiliary_is_the_questions_not_the_clauses(question, first, then):
    plan = rule_decomposition(question)
    assert [q.text for q in plan.sub_questions] == [first, then]
    assert validate_decomposition(plan) == []


def test_nested_clauses_become_a_longer_chain():
    plan = rule_decomposition("How many shops are in the region that borders the region where Hedda Marsk was born?")
    assert [q.text for q in plan.sub_questions] == [
        "the region where Hedda Marsk was born",
        "the region that borders {x1}",
        "How many shops are in {x2}?",
    ]
    assert validate_decomposition(plan) == []


def test_comparisons_become_independent_sub_questions():
    plan = rule_decomposition("Who was born earlier, Hedda Marsk or Tobias Frenn?")
    assert [q.text for q in plan.sub_questions] == [
        "Hedda Marsk: was born earlier",
        "Tobias Frenn: was born earlier",
    ]
    both = rule_decomposition("Are the Kessa Bridge and the Tollan Viaduct both toll bridges?")
    assert [q.deps for q in both.sub_questions] == [[], []]


def test_a_plain_question_has_no_rule_plan():
    assert rule_decomposition("What is the capital of France?") is None


def test_rule_entities_for_languages_without_ner():
    names = named_entities(["Лев Ландау работал в Институте физических проблем «Капица» в Москве."], "ru")[0]
    assert "Лев Ландау" in names and "Капица" in names and "Москве" in names


def test_candidates_skip_what_the_question_names_and_keep_passage_order():
    passages = [
        {"title": "Kazan", "text": "Kazan stands on the Volga. It is near Tatarstan."},
        {"title": "Volga", "text": "The Volga flows into the Caspian Sea."},
    ]
    found = entity_candidates(passages, "Which river flows past Kazan?", 5, language="xx")
    assert found[0] == "Volga" and "Kazan" not in found and "Caspian Sea" in found


@pytest.mark.parametrize(("question", "first", "then"), [
    ("In which city was the director of Silver Harbor born?", "Who or what is the director of Silver Harbor?",
     "In which city was {x1} born?"),
    # Russian: a role in the nominative and its genitive phrase
    ("Где родился основатель пекарни «Ржаной двор»?", "Кто основатель пекарни «Ржаной двор»?", "Где родился {x1}?"),
    # Chinese: "<phrase>的<role>" opening the question
    ("青松茶社的创始人出生在哪里？", "青松茶社的创始人是谁？", "{x1}出生在哪里？"),
])
def test_a_role_of_a_named_thing_is_asked_first_when_the_question_asks_more_of_it(question, first, then):
    plan = rule_decomposition(question)
    assert [(q.text, q.slot, q.deps) for q in plan.sub_questions] == [(first, "x1", []), (then, None, ["q1"])]
    assert validate_decomposition(plan) == []


def test_a_role_phrase_takes_what_describes_the_named_thing():
    described = rule_decomposition("What nationality is the director of the film Glass Orchard?")
    assert described.sub_questions[0].text == "Who or what is the director of the film Glass Orchard?"
    designed = rule_decomposition("设计南湖剧院的建筑师毕业于哪所学校？")
    assert designed.sub_questions[0].text == "设计南湖剧院的建筑师是谁？"


def test_a_role_question_that_asks_nothing_more_stays_one_hop():
    assert rule_decomposition("Who is the wife of Tobias Frenn?") is None
    assert rule_decomposition("What is the name of the river?") is None


def test_a_verb_ends_a_russian_role_phrase_and_the_rest_stays_with_the_slot():
    claim = rule_decomposition("Правда ли, что архитектор Речного вокзала учился в Казани?")
    assert [q.text for q in claim.sub_questions] == [
        "Кто архитектор Речного вокзала?", "Правда ли, что {x1} учился в Казани?"]


def test_a_russian_relative_clause_is_asked_first():
    plan = rule_decomposition("Какую школу окончила художница, по эскизам которой сделан витраж вокзала?")
    assert [q.text for q in plan.sub_questions] == [
        "художница, по эскизам которой сделан витраж вокзала", "Какую школу окончила {x1}?"]
    built = rule_decomposition("Когда открылась мастерская, построившая баржу «Ладога»?")
    assert [q.text for q in built.sub_questions] == [
        "мастерская, построившая баржу «Ладога»", "Когда открылась {x1}?"]


def test_the_adjectives_before_a_russian_noun_belong_to_its_phrase():
    # a word that does not agree with the noun is not its adjective ("данные сервис": data, a service)
    data = rule_decomposition("Где хранит данные сервис, ставший источником сбоя?")
    assert [q.text for q in data.sub_questions] == ["сервис, ставший источником сбоя", "Где хранит данные {x1}?"]
    plan = rule_decomposition("Кто возглавляет новое кафе, которое открыл пекарь Сомов?")
    assert [q.text for q in plan.sub_questions] == ["новое кафе, которое открыл пекарь Сомов", "Кто возглавляет {x1}?"]
    role = rule_decomposition("Какой завод возглавляет нынешний председатель клуба «Сокол»?")
    assert [q.text for q in role.sub_questions] == [
        "Кто нынешний председатель клуба «Сокол»?", "Какой завод возглавляет {x1}?"]


def test_russian_and_chinese_questions_of_one_hop_stay_one_hop():
    assert rule_decomposition("Кто основал пекарню «Ржаной двор»?") is None
    assert rule_decomposition("Какова длина реки Сорожи?") is None
    assert rule_decomposition("Кто был директором завода в 1950 году?") is None
    assert rule_decomposition("青松茶社的创始人是谁？") is None
    assert rule_decomposition("青松茶社的售价是多少？") is None


def test_a_russian_claim_opening_with_a_role_is_checked_along_the_chain():
    plan = rule_decomposition("Жена Ивана Сомова родилась в Туле?")
    assert [q.text for q in plan.sub_questions] == ["Кто жена Ивана Сомова?", "{x1} родилась в Туле?"]


def test_a_chinese_clause_with_a_verb_before_its_noun_is_asked_first(monkeypatch):
    monkeypatch.delenv(RULES_ENV)  # LAC's word tags
    plan = rule_decomposition("修建南湖大桥的公司成立于哪一年？")
    assert [(q.text, q.slot, q.deps) for q in plan.sub_questions] == [
        ("哪个公司修建南湖大桥？", "x1", []),  # the noun's own predicate: asked as a question
        ("{x1}成立于哪一年？", None, ["q1"]),
    ]
    # a clause with its own subject stays a phrase
    assert rule_decomposition("柏云舒出生的那个镇有多少人口？").sub_questions[0].text == "柏云舒出生的镇"
    # what a page names is one hop: no verb before 的, or nothing asked beyond the name
    assert rule_decomposition("青松茶社的总部在哪里？") is None
    assert rule_decomposition("青松茶社生产的茶叫什么名字？") is None


def test_a_chinese_role_compounded_without_de_is_asked_first(monkeypatch):
    monkeypatch.delenv(RULES_ENV)  # LAC's word tags
    plan = rule_decomposition("禾丰电器现任总经理毕业于哪所大学？")
    assert [q.text for q in plan.sub_questions] == ["禾丰电器现任总经理是谁？", "{x1}毕业于哪所大学？"]
    plan = rule_decomposition("回声邮局乐队主唱的家乡是哪里？")
    assert [q.text for q in plan.sub_questions] == ["回声邮局乐队主唱是谁？", "{x1}的家乡是哪里？"]
    # a role's characters inside other words are no role: 砚港市 + 长大, 之前 + 任职, and 卸任 holds no one
    assert rule_decomposition("苏念真是在砚港市长大的吗？") is None
    assert rule_decomposition("计算材料与数据实验室成立和韩启明卸任院长，哪件事发生得更早？") is None


def test_a_chinese_place_of_a_person_is_asked_where():
    plan = rule_decomposition("顾清远的家乡有哪条江流过？")
    assert [q.text for q in plan.sub_questions] == ["顾清远的家乡在哪里？", "{x1}有哪条江流过？"]
    assert rule_decomposition("顾清远的家乡是哪里？") is None  # asks only where: one hop
