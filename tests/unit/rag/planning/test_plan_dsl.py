"""The plan DSL round-trips exactly and refuses malformed text."""

from __future__ import annotations

import pytest

from rag.planning.dsl import DSLError, Plan, PlanStep, parse_dsl, to_dsl, translate
from rag.planning.plan import Decomposition, SubQuestion, compile_decomposition

QUESTION = 'Who founded the label that released "Harbour Lights" (1994)?'


def compiled(merge: str = "union", bridge: bool = True):
    plan = Decomposition(
        merge=merge,
        sub_questions=[
            SubQuestion(id="q1", text="Which label released Harbour Lights?", slot="label"),
            SubQuestion(id="q2", text="Who founded {label}?", deps=["q1"]),
        ],
    )
    return compile_decomposition(QUESTION, plan, bridge=bridge)


def test_translate_print_parse_round_trips_exactly():
    plan = translate(compiled())
    text = to_dsl(plan)
    assert parse_dsl(text) == plan
    assert to_dsl(parse_dsl(text)) == text
    assert 'q2_query = COMPOSE_QUERY(@q1_ans, template="Who founded {label}?")' in text
    assert "q2 = RETRIEVE(@q2_query, top_k=8)" in text
    assert text.rstrip().endswith("RETURN answer")


def test_unicode_quotes_and_numbers_survive():
    plan = Plan(
        steps=[
            PlanStep(id="s", op="RETRIEVE", args={"query": 'Лев "Ландау" 河流', "top_k": 3}),
            PlanStep(id="u", op="UNION_HITS", inputs=["s"], args={"weights": [1.5]}),
        ],
        output="u",
    )
    assert parse_dsl(to_dsl(plan)) == plan


def test_intersect_merge_translates_to_intersect_hits():
    plan = translate(compiled(merge="intersect", bridge=False))
    merge = plan.step("evidence")
    assert merge.op == "INTERSECT_HITS"
    assert merge.inputs == ["q1", "q2"]


def test_comments_and_blank_lines_are_ignored():
    text = '# replayed\n\nr = RETRIEVE(query="x y", top_k=2)\nRETURN r\n'
    assert parse_dsl(text).steps[0].args == {"query": "x y", "top_k": 2}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('r = RETRIEVE(query="x")\n', "no `RETURN id`"),
        ('r = LOOKUP(query="x")\nRETURN r\n', "unknown op LOOKUP"),
        ("r = RETRIEVE(@missing)\nRETURN r\n", "reads ['missing'] before they are defined"),
        ("r = RETRIEVE(query=x)\nRETURN r\n", "value of query is not JSON"),
        ('r = RETRIEVE(query="x", colour=1)\nRETURN r\n', "takes no argument(s) ['colour']"),
        ('r = RETRIEVE(query="x")\nr = RETRIEVE(query="y")\nRETURN r\n', "step id r is used twice"),
        ('r = RETRIEVE(query="x")\nRETURN q\n', "RETURN names unknown step q"),
        ('r = RETRIEVE(query="x")\ns = UNION_HITS(top_k=2, @r)\nRETURN s\n', "inputs (@id) must come before"),
        ('r = RETRIEVE(query="x")\nRETURN r\nr2 = RETRIEVE(query="y")\n', "nothing may follow RETURN"),
        ("just words\n", "expected `id = OP(...)`"),
    ],
)
def test_malformed_text_is_refused(text, message):
    with pytest.raises(DSLError) as caught:
        parse_dsl(text)
    assert message in str(caught.value)
