"""refine: which graded passages are refined (kept above `lower`, topped up to refine_min_passages)."""

from __future__ import annotations

from rag.knowledge.strips import multihop_floor, passages_to_refine


def test_passages_above_lower_are_topped_up_with_the_best_graded_others_in_rank_order():
    candidates = [{"id": name, "grade": grade} for name, grade in (("a", 0.6), ("b", -0.2), ("c", -0.5), ("d", 0.1))]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 0, "Who?")[0]] == ["a", "d"]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 3, "Who?")[0]] == ["a", "b", "d"]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 10, "Who?")[0]] == ["a", "b", "c", "d"]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 0, "Who?")[1]] == ["b", "c"]
    assert passages_to_refine(candidates, 0.0, 10, "Who?")[1] == []


def test_only_a_multihop_shaped_question_is_topped_up():
    assert multihop_floor({"route": "multihop"}, 2) == 2
    assert multihop_floor({"route": "single", "analysis": {"rule_plan": {"steps": []}}}, 2) == 2
    assert multihop_floor({"route": "single", "analysis": {"rule_plan": None}}, 2) == 0
    assert multihop_floor({}, 2) == 0


def test_the_pages_of_the_entities_the_question_names_are_kept_whatever_their_grade():
    candidates = [
        {"id": "q", "title": "Qingwu Robotics", "grade": 0.7},
        {"id": "m", "title": "Marlow Freight", "grade": -0.95},  # named: "Which was founded first, ... or ...?"
        {"id": "h", "title": "Harbour Freight Museum", "grade": -0.95},  # shares one term only: not named
    ]
    question = "Which was founded first, Qingwu Robotics or Marlow Freight?"
    assert [p["id"] for p in passages_to_refine(candidates, -0.9, 0, question)[0]] == ["q", "m"]
    # in Russian, with the page's title inflected and the patronymic the question leaves out
    people = [{"id": "v", "title": "Вишнякова, Тамара Николаевна", "grade": -2.0},
              {"id": "s", "title": "Стрельников, Илья Павлович", "grade": 0.4}]
    asked = "Правда ли, что Илья Стрельников и Тамара Вишнякова родились в одном городе?"
    assert [p["id"] for p in passages_to_refine(people, -0.9, 0, asked)[0]] == ["v", "s"]
