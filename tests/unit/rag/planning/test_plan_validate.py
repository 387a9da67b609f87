"""The validator rejects each kind of bad DAG, and the compiler turns a valid one into a plan."""

from __future__ import annotations

import pytest

from rag.planning.plan import (
    CompiledPlan,
    Decomposition,
    PlanLimits,
    SubQuestion,
    compile_decomposition,
    topological_order,
    validate_compiled,
    validate_decomposition,
)


def dag(*nodes: tuple) -> Decomposition:
    return Decomposition(
        sub_questions=[
            SubQuestion(
                id=n[0], text=n[1], deps=list(n[2]) if len(n) > 2 else [], slot=n[3] if len(n) > 3 else None
            )
            for n in nodes
        ]
    )


VALID = dag(("q1", "Which label released Harbour Lights?", [], "label"), ("q2", "Who founded {label}?", ["q1"]))


def test_a_two_hop_slot_plan_is_valid():
    assert validate_decomposition(VALID) == []


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        (Decomposition(sub_questions=[]), "1 to 5 sub-questions"),
        (dag(*[(f"q{i}", f"question {i}?") for i in range(1, 7)]), "1 to 5 sub-questions"),
        (dag(("q1", "a b c?"), ("q1", "d e f?")), "duplicate sub-question ids: q1"),
        (
            dag(("q1", "a b c?"), ("q2", "b c d?"), ("q3", "c d e?"), ("q4", "x y z?", ["q1", "q2", "q3"])),
            "q4 has 3 deps; at most 2",
        ),
        (dag(("q1", "Who founded it?", ["q9"])), "unknown sub-question 'q9'"),
        (dag(("q1", "Who founded it?", ["q1"])), "q1 depends on itself"),
        (
            dag(("q1", "one {b}?", ["q2"], "a"), ("q2", "two {a}?", ["q1"], "b")),
            "dependency cycle: q1 -> q2 -> q1",
        ),
        (
            dag(
                ("q1", "Which label?", [], "label"),
                ("q2", "Which studio?", [], "label"),
                ("q3", "Who founded {label}?", ["q1", "q2"]),
            ),
            "slot {label} is defined 2 times",
        ),
        (
            dag(("q1", "Which label?", [], "label"), ("q2", "Who founded Copperfield?", ["q1"])),
            "slot {label} (from q1) is never used",
        ),
        (
            dag(("q1", "Which label?", [], "label"), ("q2", "Who founded {label}?")),
            "q2 uses slot {label} but does not depend on its producer q1",
        ),
        (dag(("q1", "Who founded {studio}?")), "uses slot {studio} that no sub-question defines"),
        (dag(("q1", "Which {label} label?", [], "label")), "q1 uses its own slot {label}"),
    ],
)
def test_each_rule_rejects_a_bad_dag(plan, expected):
    errors = validate_decomposition(plan)
    assert any(expected in e for e in errors), errors


def test_a_slot_may_be_used_by_an_indirect_descendant():
    plan = dag(
        ("q1", "Which label released Harbour Lights?", [], "label"),
        ("q2", "Where is {label} based?", ["q1"], "city"),
        ("q3", "Who was the mayor of {city} when {label} was founded?", ["q2"]),
    )
    assert validate_decomposition(plan) == []


def test_limits_are_settings():
    plan = dag(("q1", "a b c?"), ("q2", "d e f?"), ("q3", "g h i?"))
    assert validate_decomposition(plan, PlanLimits(max_sub_questions=2))


def test_topological_order_puts_dependencies_first():
    plan = dag(("q2", "Who founded {label}?", ["q1"]), ("q1", "Which label released Harbour Lights?", [], "label"))
    assert [n.id for n in topological_order(plan.sub_questions)] == ["q1", "q2"]


def test_compiler_extracts_slots_and_merges_every_retrieval():
    compiled = compile_decomposition("Who founded the label that released Harbour Lights?", VALID)
    assert [s.id for s in compiled.sub_questions] == ["q1", "q2"]
    assert compiled.sub_questions[0].extract_slot == "label"
    assert compiled.sub_questions[1].slots_in == ["label"]
    assert compiled.hit_sources == ["question", "q1", "q2"]
    assert compiled.bridge is None
    assert validate_compiled(compiled) == []


def test_single_hop_compiles_to_the_question_alone_and_bridge_adds_expansion():
    question = "Who founded Copperfield Records?"
    compiled = compile_decomposition(question, dag(("q1", question)), bridge=True)
    assert compiled.sub_questions == []
    assert compiled.hit_sources == ["question", "bridge"]


def test_compiled_plan_validation_catches_slots_used_before_extraction():
    compiled = CompiledPlan.model_validate(
        {
            "question": "q",
            "hit_sources": ["question", "q9"],
            "sub_questions": [{"id": "q1", "query": "Who founded {label}?", "slots_in": ["label"]}],
        }
    )
    errors = validate_compiled(compiled)
    assert any("needs slots ['label']" in e for e in errors)
    assert any("unknown retrievals: ['q9']" in e for e in errors)
