"""The deterministic plan runtime: executes a parsed Plan step by step, with no LLM decisions about control.

Ops: RETRIEVE, EXTRACT_ANSWER, COMPOSE_QUERY, UNION_HITS, INTERSECT_HITS, SYNTHESIZE, EXTRACT_ENTITIES,
MAP_RETRIEVE, FILTER_CE, GRAPH_EXPAND. Every numeric parameter is clamped to PlanLimits; a step whose input is missing
(failed or empty) fails cleanly with a note instead of raising, and the steps after it see it as missing.
Retrieval is cached by (query, k), so a plan that asks the same query twice searches once. An LLM is used only
as a value source (EXTRACT_ANSWER, SYNTHESIZE) through callables given to the runtime, each with a rule
fallback."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.base import RelevanceEvaluator, grade
from rag.planning.dsl import Plan, PlanStep
from rag.planning.entities import entity_candidates
from rag.planning.plan import SLOT_USE, PlanLimits
from stores.tokenize import tokenize
from stores.types import Hit

SearchFn = Callable[[str, int], list[Hit]]
# (question, hits) -> (value or None, error or None): an LLM behind strict JSON, supplied by the caller.
ValueFn = Callable[[str, list[Hit]], tuple[str | None, str | None]]
# (question, hits, k) -> (hits re-ranked by the entity-passage graph walk, a note saying how).
ExpandFn = Callable[[str, list[Hit], int], tuple[list[Hit], str]]
# (question, hits, n) -> the n best answers a span reader reads there, best first, each {"text", ...its scores}.
ReadFn = Callable[[str, list[Hit], int], list[dict[str, Any]]]
RRF_K = 60
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


class StepFailed(Exception):
    """A step that cannot produce its value (a missing input, nothing to work on)."""


@dataclass
class StepValue:
    """What a step produced: hits, or strings (answer candidates, entities, composed queries)."""

    kind: str  # "hits" | "values" | "queries" | "answer"
    hits: list[Hit] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)
    slot: str | None = None
    readings: list[dict[str, Any]] = field(default_factory=list)  # the reader's scores of `strings`, when it read them


@dataclass
class PlanRun:
    values: dict[str, StepValue | None]
    records: list[dict[str, Any]]
    output: str

    @property
    def evidence(self) -> list[Hit]:
        value = self.values.get(self.output)
        return list(value.hits) if value else []

    @property
    def answer(self) -> str | None:
        value = self.values.get(self.output)
        return value.strings[0] if value and value.kind == "answer" and value.strings else None

    @property
    def failed(self) -> list[str]:
        return [r["step"] for r in self.records if r["status"] == "failed"]


def clamp(value: Any, low: float, high: float, default: float) -> Any:
    """A numeric parameter inside [low, high]; a missing or non-numeric one gets the default."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        value = default
    kind = int if isinstance(default, int) and isinstance(value, int) else type(default)
    return kind(min(max(value, low), high))


class PlanRuntime:
    """Runs plans against one retriever. `search(query, k)` is called at most once per (query, k)."""

    def __init__(
        self,
        search: SearchFn,
        limits: PlanLimits | None = None,
        extract_answer: ValueFn | None = None,
        synthesize: ValueFn | None = None,
        evaluator: RelevanceEvaluator | None = None,
        grade_thresholds: tuple[float, float] | None = None,
        language: str = "en",
        graph_expand: ExpandFn | None = None,
        read_answers: ReadFn | None = None,
    ):
        self._search = search
        self.read_answers = read_answers
        self.graph_expand = graph_expand
        self.limits = limits or PlanLimits()
        self.extract_answer = extract_answer
        self.synthesize = synthesize
        self.evaluator = evaluator
        self.grade_thresholds = grade_thresholds
        self.language = language
        self.cache: dict[tuple[str, int], list[Hit]] = {}
        self.searches = 0

    def search(self, query: str, k: int) -> list[Hit]:
        key = (query.strip(), k)
        if key not in self.cache:
            self.searches += 1
            self.cache[key] = self._search(key[0], k)
        return self.cache[key]

    def run(self, plan: Plan) -> PlanRun:
        values: dict[str, StepValue | None] = {}
        records: list[dict[str, Any]] = []
        for step in plan.steps:
            started = time.perf_counter()
            record: dict[str, Any] = {"step": step.id, "op": step.op, "inputs": list(step.inputs)}
            try:
                value, note = getattr(self, f"_op_{step.op.lower()}")(step, values)
                values[step.id] = value
                record.update(status="ok", **_summary(value))
                if note:
                    record["note"] = note
            except StepFailed as why:
                values[step.id] = None
                record.update(status="failed", note=str(why))
            except Exception as error:  # a refused query, an evaluator or model error: the plan goes on
                values[step.id] = None
                record.update(status="failed", note=f"{type(error).__name__}: {str(error)[:160]}")
            record["ms"] = round((time.perf_counter() - started) * 1000, 1)
            records.append(record)
        return PlanRun(values=values, records=records, output=plan.output)

    # ---- helpers ------------------------------------------------------------------------------------------

    def _input(self, step: PlanStep, values: dict[str, StepValue | None], index: int, kind: str) -> StepValue:
        if index >= len(step.inputs):
            raise StepFailed(f"{step.op} needs an input ({kind})")
        name = step.inputs[index]
        value = values.get(name)
        if value is None:
            raise StepFailed(f"input {name} is missing (it failed)")
        if kind == "hits" and value.kind != "hits":
            raise StepFailed(f"input {name} gives {value.kind}, not hits")
        if kind != "hits" and value.kind == "hits":
            raise StepFailed(f"input {name} gives hits, not {kind}")
        if (kind == "hits" and not value.hits) or (kind != "hits" and not value.strings):
            raise StepFailed(f"input {name} is empty")
        return value

    def _top_k(self, step: PlanStep, default: int) -> int:
        return clamp(step.args.get("top_k"), 1, self.limits.max_top_k, default)

    # ---- ops ----------------------------------------------------------------------------------------------

    def _op_retrieve(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        if step.inputs:
            queries = self._input(step, values, 0, "query").strings
        else:
            query = str(step.args.get("query") or "").strip()
            if not query:
                raise StepFailed("RETRIEVE needs a query or a query input")
            queries = [query]
        queries = queries[: self.limits.max_fanout]
        k = self._top_k(step, 8)
        # Queries composed from answer candidates count less the lower their candidate ranks.
        weights = [1.0 / (i + 1) for i in range(len(queries))]
        hits = rrf_merge([self.search(q, k) for q in queries], weights, step.id)[:k]
        note = None
        if step.args.get("grade") and self.evaluator is not None and self.grade_thresholds and hits:
            scores = self.evaluator.score(queries[0], [h.chunk.passage for h in hits])
            upper, lower = self.grade_thresholds
            note = f"CRAG grade {grade(scores, upper, lower)} (best {max(scores):.2f})"
            for hit, score in zip(hits, scores, strict=True):
                hit.scores["grade"] = float(score)
        return StepValue("hits", hits=hits, strings=queries), note

    def _op_extract_answer(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        hits = self._input(step, values, 0, "hits").hits
        question = (
            self._input(step, values, 1, "query").strings[0]
            if len(step.inputs) > 1
            else str(step.args.get("question") or "")
        )
        wanted = clamp(step.args.get("candidates"), 1, self.limits.max_fanout, 1)
        candidates: list[str] = []
        readings: list[dict[str, Any]] = []
        note = "extractive (entities and titles of the top passages)"
        if self.extract_answer is not None:
            value, error = self.extract_answer(question, hits)
            if value:
                candidates, note = [value], "LLM answer"
            else:
                note = f"LLM gave no answer ({error}); extractive fallback"
        if not candidates and self.read_answers is not None and question:
            readings = self.read_answers(question, hits, wanted)
            candidates = [r["text"] for r in readings]
            note = "read by the span reader" if candidates else "the reader found no span; extractive fallback"
        if not candidates:
            candidates = entity_candidates(
                [_passage(h) for h in hits], question, wanted, language=self.language
            )
        if not candidates:
            raise StepFailed("no answer candidate in the retrieved passages")
        return StepValue("values", strings=candidates[:wanted], slot=step.args.get("slot"),
                         readings=readings[:wanted]), note

    def _op_compose_query(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        template = str(step.args.get("template") or "")
        inputs = [self._input(step, values, i, "values") for i in range(len(step.inputs))]
        by_slot = {v.slot: v.strings for v in inputs if v.slot}
        needed = list(dict.fromkeys(SLOT_USE.findall(template)))
        missing = [s for s in needed if s not in by_slot]
        if missing:
            raise StepFailed(f"no value for slot(s) {missing}")
        # Candidate combinations, best (lowest summed rank) first, at most max_fanout queries.
        combos = sorted(
            itertools.product(*[list(enumerate(by_slot[s])) for s in needed]),
            key=lambda combo: sum(rank for rank, _ in combo),
        )[: self.limits.max_fanout]
        queries = []
        for combo in combos:
            text = template
            for slot, (_, value) in zip(needed, combo, strict=True):
                text = text.replace("{" + slot + "}", value)
            queries.append(text)
        return StepValue("queries", strings=list(dict.fromkeys(queries))), None

    def _op_union_hits(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        weights = step.args.get("weights") or [1.0] * len(step.inputs)
        if len(weights) != len(step.inputs):
            raise StepFailed(f"{len(weights)} weights for {len(step.inputs)} inputs")
        lists, used, skipped = [], [], []
        for name, weight in zip(step.inputs, weights, strict=True):
            value = values.get(name)
            if value is None or value.kind != "hits":
                skipped.append(name)
                continue
            lists.append(value.hits)
            used.append(clamp(weight, 0.0, 10.0, 1.0))
        if not lists:
            raise StepFailed("every input is missing")
        merged = rrf_merge(lists, used, step.id)
        if "top_k" in step.args:
            merged = merged[: clamp(step.args["top_k"], 1, self.limits.max_evidence * 5, 50)]
        return StepValue("hits", hits=merged), (f"skipped missing {skipped}" if skipped else None)

    def _op_intersect_hits(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        lists = [self._input(step, values, i, "hits").hits for i in range(len(step.inputs))]
        if len(lists) < 2:
            raise StepFailed("INTERSECT_HITS needs at least two inputs")
        common = set.intersection(*[{h.chunk.id for h in hits} for hits in lists])
        merged = [h for h in rrf_merge(lists, [1.0] * len(lists), step.id) if h.chunk.id in common]
        return StepValue("hits", hits=merged), f"{len(merged)} passages found by all {len(lists)} inputs"

    def _op_graph_expand(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        hits = self._input(step, values, 0, "hits").hits
        k = self._top_k(step, len(hits))
        if self.graph_expand is None:
            return StepValue("hits", hits=hits[:k]), "no graph walk available: evidence passed through"
        expanded, note = self.graph_expand(str(step.args.get("question") or ""), hits, k)
        return StepValue("hits", hits=expanded), note

    def _op_synthesize(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        hits = self._input(step, values, 0, "hits").hits
        evidence = hits[: clamp(step.args.get("max_evidence"), 1, self.limits.max_evidence, 10)]
        question = str(step.args.get("question") or "")
        answer, note = None, "extractive (best-matching evidence sentence)"
        if self.synthesize is not None:
            answer, error = self.synthesize(question, evidence)
            note = "LLM answer from the evidence" if answer else f"LLM gave no answer ({error}); extractive"
        answer = answer or best_sentence(question, evidence)
        return StepValue("answer", hits=evidence, strings=[answer] if answer else []), note

    def _op_extract_entities(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        hits = self._input(step, values, 0, "hits").hits
        names = entity_candidates(
            [_passage(h) for h in hits],
            str(step.args.get("exclude") or ""),
            clamp(step.args.get("max_entities"), 1, self.limits.max_entities, 5),
            clamp(step.args.get("from_top"), 1, self.limits.max_top_k, 3),
            language=self.language,
        )
        if not names:
            raise StepFailed("no entity candidates in the passages")
        return StepValue("values", strings=names), None

    def _op_map_retrieve(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        entities = self._input(step, values, 0, "values").strings[: self.limits.max_fanout]
        template = str(step.args.get("template") or "{entity}")
        if "{entity}" not in template:
            raise StepFailed("MAP_RETRIEVE's template must contain {entity}")
        k = self._top_k(step, 4)
        queries = [template.replace("{entity}", entity) for entity in entities]
        per_entity = [self.search(q, k) for q in queries]
        return StepValue("hits", hits=interleave(per_entity, step.id), strings=queries), None

    def _op_filter_ce(self, step: PlanStep, values: dict) -> tuple[StepValue, str | None]:
        hits = self._input(step, values, 0, "hits").hits
        if self.evaluator is None:
            return StepValue("hits", hits=hits), "no evaluator configured: kept every passage"
        threshold = clamp(
            step.args.get("threshold"), self.limits.min_threshold, self.limits.max_threshold, 0.0
        )
        question = str(step.args.get("question") or "")
        scores = self.evaluator.score(question, [h.chunk.passage for h in hits])
        kept = [h for h, s in zip(hits, scores, strict=True) if s >= threshold]
        if not kept:
            raise StepFailed(f"no passage scored at least {threshold}")
        return StepValue("hits", hits=kept), f"kept {len(kept)}/{len(hits)} at threshold {threshold}"


def rrf_merge(
    lists: Sequence[Sequence[Hit]], weights: Sequence[float], source: str, k: int = RRF_K
) -> list[Hit]:
    """Weighted reciprocal-rank fusion of hit lists by chunk id (1-based ranks), tagged with the step."""
    fused: dict[str, float] = {}
    first: dict[str, Hit] = {}
    found_by: dict[str, list[str]] = {}
    for hits, weight in zip(lists, weights, strict=True):
        for rank, hit in enumerate(hits, start=1):
            fused[hit.chunk.id] = fused.get(hit.chunk.id, 0.0) + weight / (k + rank)
            first.setdefault(hit.chunk.id, hit)
            found_by.setdefault(hit.chunk.id, []).extend(hit.sources)
    order = sorted(fused, key=lambda cid: -fused[cid])
    return [
        _tagged(
            Hit(first[cid].chunk, first[cid].score, first[cid].scores, list(dict.fromkeys(found_by[cid]))),
            fused[cid],
            source,
        )
        for cid in order
    ]


def interleave(lists: Sequence[Sequence[Hit]], source: str) -> list[Hit]:
    """Round-robin by rank over per-entity lists: each entity's best hit before any entity's second."""
    seen: set[str] = set()
    merged: list[Hit] = []
    for rank in range(max((len(hits) for hits in lists), default=0)):
        for hits in lists:
            if rank < len(hits) and hits[rank].chunk.id not in seen:
                seen.add(hits[rank].chunk.id)
                merged.append(_tagged(hits[rank], 1.0 / (RRF_K + len(merged) + 1), source))
    return merged


def _tagged(hit: Hit, score: float, source: str) -> Hit:
    sources = hit.sources if source in hit.sources else [*hit.sources, source]
    return Hit(chunk=hit.chunk, score=float(score), scores=dict(hit.scores), sources=list(sources))


def _passage(hit: Hit) -> dict[str, Any]:
    return {"title": hit.chunk.title, "text": hit.chunk.text}


def best_sentence(question: str, hits: Sequence[Hit]) -> str | None:
    """The evidence sentence sharing the most index terms with the question (earlier passages win ties)."""
    wanted = set(tokenize(question))
    best, best_overlap = None, 0
    for hit in hits:
        for sentence in _SENTENCE.split(hit.chunk.text):
            overlap = len(wanted & set(tokenize(sentence)))
            if overlap > best_overlap:
                best, best_overlap = sentence.strip(), overlap
    return best


def _summary(value: StepValue) -> dict[str, Any]:
    summary: dict[str, Any] = {"kind": value.kind}
    if value.hits:
        summary["hits"] = [h.chunk.id for h in value.hits[:20]]
    if value.strings:
        summary["values"] = value.strings[:10]
    return summary
