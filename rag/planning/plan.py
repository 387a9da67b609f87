"""Multi-hop plans: the decomposition DAG, its validator, and the deterministic compiler to a CompiledPlan.

A question becomes 1-5 sub-questions; a sub-question may produce a slot (`{x}`) that later sub-questions use
in their text. The validator enforces the DAG rules before anything runs, so an LLM's plan is either accepted
as a whole or rejected with errors that can be fed back to it. The compiler turns a valid DAG into a
CompiledPlan: JSON that says which sub-questions retrieve, which extract a slot value, which hits make the
evidence, how they merge (union / intersect) and how much evidence goes to synthesis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

IDENTIFIER = r"^[A-Za-z][A-Za-z0-9_]{0,23}$"
SLOT_USE = re.compile(r"\{([A-Za-z][A-Za-z0-9_]{0,23})\}")
Merge = Literal["union", "intersect"]


@dataclass(frozen=True)
class PlanLimits:
    """Bounds every plan and step parameter is clamped to (an LLM cannot ask for a 500-passage fan-out)."""

    max_sub_questions: int = 5
    max_deps: int = 2
    max_top_k: int = 20
    max_fanout: int = 5
    max_entities: int = 8
    max_evidence: int = 20
    min_threshold: float = -1.0
    max_threshold: float = 1.0


class SubQuestion(BaseModel):
    """One node of the DAG. `slot` names the value its answer provides to later sub-questions."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=IDENTIFIER)
    text: str = Field(min_length=3, max_length=500)
    deps: list[str] = Field(default_factory=list)
    slot: str | None = Field(default=None, pattern=IDENTIFIER)

    def slots_used(self) -> list[str]:
        return list(dict.fromkeys(SLOT_USE.findall(self.text)))


class Decomposition(BaseModel):
    """What the decomposer returns (strict JSON): the sub-questions and how their hits combine."""

    model_config = ConfigDict(extra="forbid")

    sub_questions: list[SubQuestion]
    merge: Merge = "union"


def validate_decomposition(plan: Decomposition, limits: PlanLimits = PlanLimits()) -> list[str]:
    """Every rule the DAG breaks, as readable errors; an empty list means the plan is valid."""
    nodes = plan.sub_questions
    errors: list[str] = []
    if not 1 <= len(nodes) <= limits.max_sub_questions:
        errors.append(f"a plan needs 1 to {limits.max_sub_questions} sub-questions, got {len(nodes)}")
    ids = [n.id for n in nodes]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        errors.append(f"duplicate sub-question ids: {', '.join(duplicated)}")
    known = set(ids)
    for node in nodes:
        if len(node.deps) > limits.max_deps:
            errors.append(f"{node.id} has {len(node.deps)} deps; at most {limits.max_deps} allowed")
        for dep in node.deps:
            if dep == node.id:
                errors.append(f"{node.id} depends on itself")
            elif dep not in known:
                errors.append(f"{node.id} depends on unknown sub-question {dep!r}")
    cycle = _find_cycle(nodes)
    if cycle:
        errors.append("dependency cycle: " + " -> ".join(cycle))
    errors += _slot_errors(nodes, cycle_free=not cycle)
    return errors


def _slot_errors(nodes: list[SubQuestion], cycle_free: bool) -> list[str]:
    errors: list[str] = []
    producers: dict[str, list[str]] = {}
    for node in nodes:
        if node.slot:
            producers.setdefault(node.slot, []).append(node.id)
    for slot, by in producers.items():
        if len(by) > 1:
            errors.append(f"slot {{{slot}}} is defined {len(by)} times ({', '.join(by)}); define it once")
    used: set[str] = set()
    ancestors = _ancestors(nodes) if cycle_free else {}
    for node in nodes:
        for slot in node.slots_used():
            used.add(slot)
            if slot not in producers:
                errors.append(f"{node.id} uses slot {{{slot}}} that no sub-question defines")
                continue
            producer = producers[slot][0]
            if producer == node.id:
                errors.append(f"{node.id} uses its own slot {{{slot}}}")
            elif cycle_free and producer not in ancestors.get(node.id, set()):
                errors.append(
                    f"{node.id} uses slot {{{slot}}} but does not depend on its producer {producer}"
                )
    for slot, by in producers.items():
        if slot not in used:
            errors.append(f"slot {{{slot}}} (from {by[0]}) is never used")
    return errors


def _find_cycle(nodes: list[SubQuestion]) -> list[str]:
    """One dependency cycle as a path of ids (first id repeated at the end), or [] when acyclic."""
    deps = {n.id: [d for d in n.deps if d != n.id] for n in nodes}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for dep in deps.get(node, []):
            if dep not in deps:
                continue
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return []

    for node in deps:
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def _ancestors(nodes: list[SubQuestion]) -> dict[str, set[str]]:
    deps = {n.id: set(n.deps) for n in nodes}
    result: dict[str, set[str]] = {}

    def of(node: str) -> set[str]:
        if node not in result:
            result[node] = set()
            for dep in deps.get(node, ()):
                result[node] |= {dep} | of(dep)
        return result[node]

    for node in deps:
        of(node)
    return result


def topological_order(nodes: list[SubQuestion]) -> list[SubQuestion]:
    """Dependencies first; ties keep the order the decomposer wrote them in. Assumes a validated DAG."""
    placed: list[SubQuestion] = []
    done: set[str] = set()
    remaining = list(nodes)
    while remaining:
        ready = [n for n in remaining if set(n.deps) <= done]
        if not ready:
            raise ValueError("the decomposition has a cycle; validate it first")
        placed.append(ready[0])
        done.add(ready[0].id)
        remaining.remove(ready[0])
    return placed


# ---- the compiled plan ------------------------------------------------------------------------------------


class CompiledSubQuestion(BaseModel):
    """How one sub-question runs: its query (a template when it uses slots), retrieval size, yield."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=IDENTIFIER)
    query: str
    slots_in: list[str] = Field(default_factory=list)
    top_k: int = 8
    extract_slot: str | None = None
    candidates: int = 1
    filter_threshold: float | None = None


class BridgeExpansion(BaseModel):
    """Entity expansion after a retrieval: candidates from its top passages, one retrieval per candidate."""

    model_config = ConfigDict(extra="forbid")

    source: str
    from_top: int = 3
    max_entities: int = 5
    template: str = "{entity} {question}"
    top_k: int = 4


class CompiledPlan(BaseModel):
    """The JSON between decomposition and the DSL. `hit_sources` names the retrievals whose hits become
    evidence ("question" is the whole question's own retrieval, "bridge" the entity expansion)."""

    model_config = ConfigDict(extra="forbid")

    question: str
    sub_questions: list[CompiledSubQuestion]
    question_top_k: int = 10
    bridge: BridgeExpansion | None = None
    hit_sources: list[str]
    source_weights: dict[str, float] = Field(default_factory=dict)
    merge: Merge = "union"
    synth_from: str = "evidence"
    max_evidence: int = 10
    graph_expand: bool = False


@dataclass(frozen=True)
class CompileSettings:
    """Deterministic compiler knobs (sizes of each retrieval, how many slot candidates to chain)."""

    question_top_k: int = 10
    sub_top_k: int = 8
    slot_candidates: int = 2
    max_evidence: int = 10
    bridge_from_top: int = 3
    bridge_entities: int = 5
    bridge_top_k: int = 4
    bridge_template: str = "{entity} {question}"
    question_weight: float = 1.0
    sub_weight: float = 1.0
    bridge_weight: float = 1.0
    graph_expand: bool = True


def compile_decomposition(
    question: str, plan: Decomposition, settings: CompileSettings = CompileSettings(), bridge: bool = False
) -> CompiledPlan:
    """A valid DAG as a CompiledPlan: every sub-question retrieves (its slots filled from its producers'
    extracted answers), every slot producer extracts an answer, and the question's own retrieval plus every
    sub-question's hits merge into the evidence. `bridge` adds entity expansion from the question's hits."""
    ordered = topological_order(plan.sub_questions)
    steps = [
        CompiledSubQuestion(
            id=node.id,
            query=node.text,
            slots_in=node.slots_used(),
            top_k=settings.sub_top_k,
            extract_slot=node.slot,
            candidates=settings.slot_candidates if node.slot else 1,
        )
        for node in ordered
    ]
    single = len(steps) == 1 and steps[0].query.strip() == question.strip()
    sources = ["question"] + ([] if single else [s.id for s in steps])
    weights = {"question": settings.question_weight, **{s.id: settings.sub_weight for s in steps}}
    expansion = None
    if bridge:
        expansion = BridgeExpansion(
            source="question",
            from_top=settings.bridge_from_top,
            max_entities=settings.bridge_entities,
            top_k=settings.bridge_top_k,
            template=settings.bridge_template,
        )
        sources.append("bridge")
        weights["bridge"] = settings.bridge_weight
    return CompiledPlan(
        question=question,
        sub_questions=[] if single else steps,
        question_top_k=settings.question_top_k,
        bridge=expansion,
        hit_sources=sources,
        source_weights=weights,
        merge=plan.merge,
        max_evidence=settings.max_evidence,
        graph_expand=settings.graph_expand,
    )


def validate_compiled(plan: CompiledPlan, limits: PlanLimits = PlanLimits()) -> list[str]:
    """Rules for a CompiledPlan from an untrusted source (the optional LLM compiler, a replayed file)."""
    errors: list[str] = []
    ids = [s.id for s in plan.sub_questions]
    if len(ids) > limits.max_sub_questions:
        errors.append(f"{len(ids)} sub-questions; at most {limits.max_sub_questions}")
    if len(set(ids)) != len(ids) or {"question", "bridge"} & set(ids):
        errors.append("sub-question ids must be unique and not 'question' or 'bridge'")
    produced: set[str] = set()
    for step in plan.sub_questions:
        missing = [s for s in step.slots_in if s not in produced]
        if missing:
            errors.append(f"{step.id} needs slots {missing} before any earlier sub-question extracts them")
        unused = set(SLOT_USE.findall(step.query)) ^ set(step.slots_in)
        if unused:
            errors.append(f"{step.id}: slots_in {step.slots_in} do not match its query's slots")
        if step.extract_slot:
            produced.add(step.extract_slot)
    known = {"question", *ids, *(["bridge"] if plan.bridge else [])}
    unknown = [s for s in plan.hit_sources if s not in known]
    if unknown:
        errors.append(f"hit_sources name unknown retrievals: {unknown}")
    if not plan.hit_sources:
        errors.append("hit_sources is empty: the plan would gather no evidence")
    if plan.bridge and plan.bridge.source not in {"question", *ids}:
        errors.append(f"bridge source {plan.bridge.source!r} is not a retrieval of this plan")
    return errors
