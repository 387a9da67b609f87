"""The plan DSL: a CompiledPlan translated into linear steps, printed as text and parsed back.

One step a line, `id = OP(@input, ..., key=<JSON value>, ...)`, inputs first, keyword arguments sorted by
name; `RETURN id` names the result. `#` starts a comment line. The text is the boundary between the
probabilistic part (an LLM may have written the decomposition) and the deterministic runtime: what the runtime
executes is exactly what the text says, so a run can be replayed from its trace.

    question = RETRIEVE(query="Who directed the film that won ...?", top_k=10)
    q1 = RETRIEVE(query="Which film won ...?", top_k=8)
    q1_ans = EXTRACT_ANSWER(@q1, candidates=2, question="Which film won ...?", slot="film")
    q2_query = COMPOSE_QUERY(@q1_ans, template="Who directed {film}?")
    q2 = RETRIEVE(@q2_query, top_k=8)
    evidence = UNION_HITS(@question, @q1, @q2, weights=[1.0, 1.0, 1.0])
    answer = SYNTHESIZE(@evidence, max_evidence=10, question="Who directed the film that won ...?")
    RETURN answer
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rag.planning.plan import IDENTIFIER, CompiledPlan

Op = Literal[
    "RETRIEVE",
    "EXTRACT_ANSWER",
    "COMPOSE_QUERY",
    "UNION_HITS",
    "INTERSECT_HITS",
    "SYNTHESIZE",
    "EXTRACT_ENTITIES",
    "MAP_RETRIEVE",
    "FILTER_CE",
    "GRAPH_EXPAND",
]

# op -> (input kinds it accepts, arguments it accepts). Kinds: hits, value (answers / entities), query.
OP_SIGNATURES: dict[str, tuple[str, frozenset[str]]] = {
    "RETRIEVE": ("0-1 query", frozenset({"query", "top_k", "grade"})),
    "EXTRACT_ANSWER": ("hits [query]", frozenset({"question", "slot", "candidates"})),
    "COMPOSE_QUERY": ("1+ value", frozenset({"template"})),
    "UNION_HITS": ("1+ hits", frozenset({"weights", "top_k"})),
    "INTERSECT_HITS": ("2+ hits", frozenset({"top_k"})),
    "SYNTHESIZE": ("hits", frozenset({"question", "max_evidence"})),
    "EXTRACT_ENTITIES": ("hits", frozenset({"exclude", "from_top", "max_entities"})),
    "MAP_RETRIEVE": ("value", frozenset({"template", "top_k"})),
    "FILTER_CE": ("hits", frozenset({"question", "threshold"})),
    "GRAPH_EXPAND": ("hits", frozenset({"question", "top_k"})),
}
_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s*=\s*([A-Z_]+)\((.*)\)$")
_RETURN = re.compile(r"^RETURN\s+([A-Za-z][A-Za-z0-9_]*)$")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


class DSLError(ValueError):
    """Plan text that does not parse, or a plan whose steps do not fit together."""


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=IDENTIFIER)
    op: Op
    inputs: list[str] = Field(default_factory=list)
    args: dict[str, Any] = Field(default_factory=dict)


class Plan(BaseModel):
    """The executable plan: steps in order (each input names an earlier step) and the step it returns."""

    model_config = ConfigDict(extra="forbid")

    steps: list[PlanStep]
    output: str

    def step(self, step_id: str) -> PlanStep:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)


def translate(compiled: CompiledPlan) -> Plan:
    """CompiledPlan -> linear steps. Step ids: a retrieval is named after its source ("question", "q1",
    "bridge"), then <id>_ce (evaluator filter), <id>_ans (extracted slot value), <id>_query (composed
    query)."""
    steps: list[PlanStep] = [
        PlanStep(
            id="question", op="RETRIEVE", args={"query": compiled.question, "top_k": compiled.question_top_k}
        )
    ]
    hits_of = {"question": "question"}
    answer_of_slot: dict[str, str] = {}
    for sub in compiled.sub_questions:
        question_ref: list[str] = []
        if sub.slots_in:
            compose = f"{sub.id}_query"
            steps.append(
                PlanStep(
                    id=compose,
                    op="COMPOSE_QUERY",
                    inputs=[answer_of_slot[s] for s in sub.slots_in],
                    args={"template": sub.query},
                )
            )
            steps.append(PlanStep(id=sub.id, op="RETRIEVE", inputs=[compose], args={"top_k": sub.top_k}))
            question_ref = [compose]
        else:
            steps.append(PlanStep(id=sub.id, op="RETRIEVE", args={"query": sub.query, "top_k": sub.top_k}))
        hits_of[sub.id] = sub.id
        if sub.filter_threshold is not None:
            steps.append(
                PlanStep(
                    id=f"{sub.id}_ce",
                    op="FILTER_CE",
                    inputs=[sub.id],
                    args={"question": sub.query, "threshold": sub.filter_threshold},
                )
            )
            hits_of[sub.id] = f"{sub.id}_ce"
        if sub.extract_slot:
            args: dict[str, Any] = {"slot": sub.extract_slot, "candidates": sub.candidates}
            if not question_ref:
                args["question"] = sub.query
            steps.append(
                PlanStep(
                    id=f"{sub.id}_ans",
                    op="EXTRACT_ANSWER",
                    inputs=[hits_of[sub.id], *question_ref],
                    args=args,
                )
            )
            answer_of_slot[sub.extract_slot] = f"{sub.id}_ans"
    if compiled.bridge:
        bridge = compiled.bridge
        steps.append(
            PlanStep(
                id="bridge_entities",
                op="EXTRACT_ENTITIES",
                inputs=[hits_of[bridge.source]],
                args={
                    "exclude": compiled.question,
                    "from_top": bridge.from_top,
                    "max_entities": bridge.max_entities,
                },
            )
        )
        steps.append(
            PlanStep(
                id="bridge",
                op="MAP_RETRIEVE",
                inputs=["bridge_entities"],
                args={
                    "template": bridge.template.replace("{question}", compiled.question),
                    "top_k": bridge.top_k,
                },
            )
        )
        hits_of["bridge"] = "bridge"
    sources = [hits_of[s] for s in compiled.hit_sources]
    if compiled.merge == "intersect" and len(sources) > 1:
        # The question's own retrieval is a pool every source is checked against, not a constraint.
        constrained = [hits_of[s] for s in compiled.hit_sources if s != "question"] or sources
        merge = PlanStep(
            id="evidence", op="INTERSECT_HITS", inputs=constrained if len(constrained) > 1 else sources
        )
    else:
        weights = [float(compiled.source_weights.get(s, 1.0)) for s in compiled.hit_sources]
        merge = PlanStep(id="evidence", op="UNION_HITS", inputs=sources, args={"weights": weights})
    steps.append(merge)
    evidence = "evidence"
    if compiled.graph_expand:
        evidence = "expanded"
        steps.append(PlanStep(id=evidence, op="GRAPH_EXPAND", inputs=["evidence"],
                              args={"question": compiled.question, "top_k": compiled.max_evidence}))
    steps.append(
        PlanStep(
            id="answer",
            op="SYNTHESIZE",
            inputs=[evidence],
            args={"question": compiled.question, "max_evidence": compiled.max_evidence},
        )
    )
    return Plan(steps=steps, output="answer")


def to_dsl(plan: Plan) -> str:
    """The plan as DSL text (canonical: inputs first, arguments sorted, JSON values)."""
    lines = []
    for step in plan.steps:
        parts = [f"@{i}" for i in step.inputs]
        parts += [f"{key}={json.dumps(step.args[key], ensure_ascii=False)}" for key in sorted(step.args)]
        lines.append(f"{step.id} = {step.op}({', '.join(parts)})")
    lines.append(f"RETURN {plan.output}")
    return "\n".join(lines) + "\n"


def parse_dsl(text: str) -> Plan:
    """DSL text -> Plan, checked: known ops and arguments, unique ids, inputs that name earlier steps."""
    steps: list[PlanStep] = []
    output = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if output is not None:
            raise DSLError(f"line {number}: nothing may follow RETURN")
        returned = _RETURN.match(line)
        if returned:
            output = returned.group(1)
            continue
        match = _LINE.match(line)
        if not match:
            raise DSLError(f"line {number}: expected `id = OP(...)` or `RETURN id`, got {line[:80]!r}")
        step_id, op, body = match.groups()
        if op not in OP_SIGNATURES:
            raise DSLError(f"line {number}: unknown op {op}; known: {', '.join(OP_SIGNATURES)}")
        inputs, args = _parse_arguments(body, number)
        steps.append(PlanStep.model_validate({"id": step_id, "op": op, "inputs": inputs, "args": args}))
    if output is None:
        raise DSLError("the plan has no `RETURN id` line")
    plan = Plan(steps=steps, output=output)
    errors = check_plan(plan)
    if errors:
        raise DSLError("; ".join(errors))
    return plan


def check_plan(plan: Plan) -> list[str]:
    """Structural errors: duplicate ids, forward or unknown inputs, arguments an op does not take."""
    errors: list[str] = []
    seen: set[str] = set()
    for step in plan.steps:
        if step.id in seen:
            errors.append(f"step id {step.id} is used twice")
        unknown_inputs = [i for i in step.inputs if i not in seen]
        if unknown_inputs:
            errors.append(f"{step.id} reads {unknown_inputs} before they are defined")
        extra = set(step.args) - OP_SIGNATURES[step.op][1]
        if extra:
            errors.append(f"{step.id}: {step.op} takes no argument(s) {sorted(extra)}")
        seen.add(step.id)
    if plan.output not in seen:
        errors.append(f"RETURN names unknown step {plan.output}")
    return errors


def _parse_arguments(body: str, number: int) -> tuple[list[str], dict[str, Any]]:
    decoder = json.JSONDecoder()
    inputs: list[str] = []
    args: dict[str, Any] = {}
    position = 0
    while True:
        while position < len(body) and body[position] == " ":
            position += 1
        if position >= len(body):
            return inputs, args
        if body[position] == "@":
            name = _NAME.match(body, position + 1)
            if not name:
                raise DSLError(f"line {number}: `@` must be followed by a step id")
            if args:
                raise DSLError(f"line {number}: inputs (@id) must come before keyword arguments")
            inputs.append(name.group(0))
            position = name.end()
        else:
            name = _NAME.match(body, position)
            if not name or body[name.end() : name.end() + 1] != "=":
                raise DSLError(
                    f"line {number}: expected @input or key=value at {body[position : position + 30]!r}"
                )
            key = name.group(0)
            if key in args:
                raise DSLError(f"line {number}: argument {key} given twice")
            try:
                args[key], position = decoder.raw_decode(body, name.end() + 1)
            except json.JSONDecodeError as error:
                raise DSLError(f"line {number}: value of {key} is not JSON ({error.msg})") from error
        while position < len(body) and body[position] == " ":
            position += 1
        if position < len(body):
            if body[position] != ",":
                raise DSLError(f"line {number}: expected `,` at {body[position : position + 30]!r}")
            position += 1
