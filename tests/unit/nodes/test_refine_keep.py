"""refine: which graded passages are refined (kept above `lower`, topped up to refine_min_passages)."""

from __future__ import annotations

from cragraph.knowledge.strips import multihop_floor, passages_to_refine


def test_passages_above_lower_are_topped_up_with_the_best_graded_others_in_rank_order():
    candidates = [{"id": name, "grade": grade} for name, grade in (("a", 0.6), ("b", -0.2), ("c", -0.5), ("d", 0.1))]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 0)[0]] == ["a", "d"]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 3)[0]] == ["a", "b", "d"]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 10)[0]] == ["a", "b", "c", "d"]
    assert [p["id"] for p in passages_to_refine(candidates, 0.0, 0)[1]] == ["b", "c"]
    assert passages_to_refine(candidates, 0.0, 10)[1] == []


def test_only_a_multihop_shaped_question_is_topped_up():
    assert multihop_floor({"route": "multihop"}, 2) == 2
    assert multihop_floor({"route": "single", "analysis": {"rule_plan": {"steps": []}}}, 2) == 2
    assert multihop_floor({"route": "single", "analysis": {"rule_plan": None}}, 2) == 0
    assert multihop_floor({}, 2) == 0
