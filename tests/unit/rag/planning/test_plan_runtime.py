"""The plan runtime: a 2-hop slot plan end to end, clamping, failures, caching, union vs intersect, FILTER_CE.

Retrieval is a term-overlap search over a constructed corpus; entity fallbacks use the rule extractor
(language "xx"), so no model loads.
"""

from __future__ import annotations

from rag.planning.dsl import Plan, PlanStep, parse_dsl, translate
from rag.planning.plan import (
    CompileSettings,
    Decomposition,
    PlanLimits,
    SubQuestion,
    compile_decomposition,
)
from rag.planning.runtime import PlanRuntime, clamp
from stores.tokenize import tokenize
from stores.types import Chunk, Hit
from tests.fixtures.graph import KeywordEvaluator

CORPUS = {
    "harbour": (
        "Harbour Lights (album)",
        "Harbour Lights is a 1994 album by Hedda Marsk, released by Copperfield Records.",
    ),
    "copperfield": ("Copperfield Records", "Copperfield Records is a record label founded in 1971 by Harrow Records."),
    "harrow": ("Harrow Records", "Harrow Records is a Vestral record label owned by Halvmere Media."),
    "salt": ("Salt Roads (album)", "Salt Roads is a 1998 album by Hedda Marsk."),
    "lantern": ("Lantern", "Lantern is a record label founded by Tobias Frenn in Skarnvik."),
}
CHUNKS = [Chunk(id=key, doc_id=key, title=title, text=text) for key, (title, text) in CORPUS.items()]


class OverlapSearch:
    """Ranks chunks by shared index terms with the query; records every query it was asked."""

    def __init__(self):
        self.queries: list[tuple[str, int]] = []

    def __call__(self, query: str, k: int) -> list[Hit]:
        self.queries.append((query, k))
        terms = set(tokenize(query))
        scored = [(len(terms & set(tokenize(c.passage))), c) for c in CHUNKS]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])
        return [Hit(chunk=c, score=float(s), sources=["bm25:0"]) for s, c in scored[:k]]


def two_hop_plan(question: str = "Who founded the label that released Harbour Lights?") -> Plan:
    dag = Decomposition(
        sub_questions=[
            SubQuestion(id="q1", text="Which record label released the album Harbour Lights?", slot="label"),
            SubQuestion(id="q2", text="In which year was {label} founded?", deps=["q1"]),
        ]
    )
    return translate(compile_decomposition(question, dag))


def test_two_hop_plan_retrieves_with_the_extracted_value():
    search = OverlapSearch()
    asked = []

    def extract(question, hits):
        asked.append((question, [h.chunk.id for h in hits]))
        return "Copperfield Records", None

    run = PlanRuntime(search, extract_answer=extract, language="xx").run(two_hop_plan())
    assert run.failed == []
    assert asked[0][0] == "Which record label released the album Harbour Lights?"
    assert asked[0][1][0] == "harbour"
    assert ("In which year was Copperfield Records founded?", 8) in search.queries
    assert run.values["q2"].hits[0].chunk.id == "copperfield"
    ids = [h.chunk.id for h in run.evidence]
    assert {"harbour", "copperfield"} <= set(ids)
    assert "q2" in run.evidence[ids.index("copperfield")].sources


def test_without_an_llm_the_extractive_fallback_fills_the_slot():
    run = PlanRuntime(OverlapSearch(), language="xx").run(two_hop_plan())
    record = next(r for r in run.records if r["step"] == "q1_ans")
    assert record["note"].startswith("extractive")
    assert "Copperfield Records" in run.values["q1_ans"].strings
    assert any("Copperfield Records" in q for q in run.values["q2_query"].strings)


def test_llm_failure_falls_back_to_extraction_and_is_noted():
    run = PlanRuntime(OverlapSearch(), extract_answer=lambda q, h: (None, "invalid JSON"), language="xx").run(
        two_hop_plan()
    )
    note = next(r for r in run.records if r["step"] == "q1_ans")["note"]
    assert "invalid JSON" in note and "extractive fallback" in note


def test_retrieval_is_cached_by_query():
    search = OverlapSearch()
    plan = parse_dsl(
        'a = RETRIEVE(query="Copperfield Records", top_k=3)\nb = RETRIEVE(query="Copperfield Records", top_k=3)\n'
        "u = UNION_HITS(@a, @b)\nRETURN u\n"
    )
    runtime = PlanRuntime(search)
    runtime.run(plan)
    assert search.queries == [("Copperfield Records", 3)]
    assert runtime.searches == 1


def test_parameters_are_clamped_to_the_limits():
    search = OverlapSearch()
    plan = parse_dsl(
        'a = RETRIEVE(query="record label", top_k=5000)\n'
        'e = EXTRACT_ENTITIES(@a, exclude="", from_top=99, max_entities=99)\n'
        'm = MAP_RETRIEVE(@e, template="{entity}", top_k=-4)\nRETURN m\n'
    )
    run = PlanRuntime(search, PlanLimits(max_top_k=3, max_fanout=2, max_entities=4), language="xx").run(plan)
    assert search.queries[0] == ("record label", 3)
    assert len(run.values["e"].strings) == 4
    assert [k for _, k in search.queries[1:]] == [1, 1]  # fan-out 2, top_k clamped up to 1
    assert clamp("x", 1, 5, 3) == 3 and clamp(9.5, 0.0, 1.0, 0.5) == 1.0


def test_a_step_with_a_missing_input_fails_cleanly_and_later_steps_see_it_missing():
    plan = parse_dsl(
        'a = RETRIEVE(query="zzz qqq", top_k=3)\n'
        'x = EXTRACT_ANSWER(@a, question="zzz", slot="v")\n'
        'c = COMPOSE_QUERY(@x, template="about {v}")\n'
        "b = RETRIEVE(@c, top_k=3)\n"
        'k = RETRIEVE(query="Lantern label", top_k=2)\n'
        "u = UNION_HITS(@b, @k)\nRETURN u\n"
    )
    run = PlanRuntime(OverlapSearch(), language="xx").run(plan)
    assert run.failed == ["x", "c", "b"]
    notes = {r["step"]: r.get("note", "") for r in run.records}
    assert "input a is empty" in notes["x"] and "input x is missing" in notes["c"]
    assert "skipped missing ['b']" in notes["u"]
    assert run.evidence[0].chunk.id == "lantern"


def test_union_keeps_everything_and_intersect_only_what_every_input_found():
    text = (
        'a = RETRIEVE(query="Hedda Marsk album", top_k=5)\n'
        'b = RETRIEVE(query="Copperfield Records label", top_k=5)\n'
        "m = {op}(@a, @b)\nRETURN m\n"
    )
    union = PlanRuntime(OverlapSearch()).run(parse_dsl(text.format(op="UNION_HITS"))).evidence
    intersect = PlanRuntime(OverlapSearch()).run(parse_dsl(text.format(op="INTERSECT_HITS"))).evidence
    assert {h.chunk.id for h in union} == {"harbour", "salt", "copperfield", "harrow", "lantern"}
    assert {h.chunk.id for h in intersect} == {"harbour"}


def test_filter_ce_drops_passages_below_the_threshold():
    plan = parse_dsl(
        'a = RETRIEVE(query="record label founded", top_k=5)\n'
        'f = FILTER_CE(@a, question="record label founded", threshold=0.5)\nRETURN f\n'
    )
    run = PlanRuntime(OverlapSearch(), evaluator=KeywordEvaluator()).run(plan)
    assert {h.chunk.id for h in run.values["a"].hits} > {h.chunk.id for h in run.evidence}
    assert {h.chunk.id for h in run.evidence} == {"copperfield", "lantern"}


def test_synthesize_caps_evidence_and_answers_from_it():
    plan = Plan(
        steps=[
            PlanStep(id="a", op="RETRIEVE", args={"query": "record label", "top_k": 5}),
            PlanStep(
                id="s",
                op="SYNTHESIZE",
                inputs=["a"],
                args={"question": "Who founded Lantern?", "max_evidence": 2},
            ),
        ],
        output="s",
    )
    run = PlanRuntime(OverlapSearch(), synthesize=lambda q, hits: (f"from {len(hits)}", None)).run(plan)
    assert len(run.evidence) == 2 and run.answer == "from 2"
    extractive = PlanRuntime(OverlapSearch()).run(plan)
    assert extractive.answer and "record label" in extractive.answer


def _expand_plan() -> Plan:
    return parse_dsl('q = RETRIEVE(query="Harbour Lights album Copperfield Records", top_k=3)\n'
                     'x = GRAPH_EXPAND(@q, question="Who founded the label of Harbour Lights?", top_k=2)\nRETURN x')


def test_graph_expand_re_ranks_evidence_through_the_given_walk():
    calls = []

    def walk(question: str, hits: list[Hit], k: int) -> tuple[list[Hit], str]:
        calls.append((question, [h.chunk.id for h in hits], k))
        return list(reversed(hits))[:k], "walked"

    run = PlanRuntime(OverlapSearch(), graph_expand=walk).run(_expand_plan())
    assert calls == [("Who founded the label of Harbour Lights?", ["harbour", "copperfield", "harrow"], 2)]
    assert [h.chunk.id for h in run.evidence] == ["harrow", "copperfield"]
    assert run.records[-1]["note"] == "walked"


def test_graph_expand_without_a_walk_passes_the_evidence_through():
    run = PlanRuntime(OverlapSearch()).run(_expand_plan())
    assert [h.chunk.id for h in run.evidence] == ["harbour", "copperfield"]
    assert "passed through" in run.records[-1]["note"]


def test_compiled_plans_expand_their_evidence_unless_switched_off():
    decomposition = Decomposition(sub_questions=[SubQuestion(id="q1", text="Which label released Harbour Lights?")])
    on = translate(compile_decomposition("Who founded the label of Harbour Lights?", decomposition))
    assert [s.op for s in on.steps][-2:] == ["GRAPH_EXPAND", "SYNTHESIZE"]
    assert on.steps[-1].inputs == ["expanded"]
    off = translate(compile_decomposition("Who founded the label of Harbour Lights?", decomposition,
                                          CompileSettings(graph_expand=False)))
    assert "GRAPH_EXPAND" not in [s.op for s in off.steps]
