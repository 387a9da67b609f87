"""Settings of the multi-hop subgraph, read from the run's Context as `multihop_<name>` fields.

Context (graph/context.py) carries one `multihop_<name>` field per setting (shown in Studio, overridable by
CRAGRAPH_MULTIHOP_<NAME>); a context object without them (a caller's own) gets the defaults below."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from stores.plan import CompileSettings, PlanLimits

PREFIX = "multihop_"


@dataclass
class MultihopSettings:
    """Defaults suit the embedded models: rule decomposition plus entity bridging, no LLM calls."""

    llm_decompose: bool = (
        False  # ask the chat model for the DAG (the 135M embedded model rarely gives a valid one)
    )
    decompose_model: str = ""  # chat model for decompose / compile / extract / synthesize; empty = chat_model
    llm_compile: bool = False  # optional LLM compiler, validated, with the deterministic one as fallback
    llm_extract: bool = False  # EXTRACT_ANSWER through the chat model (strict JSON), else extractive
    llm_synthesize: bool = False  # SYNTHESIZE a draft answer with the chat model, else the best sentence
    rule_decompose: bool = True  # rule-based bridge / comparison decomposition as the fallback
    bridge: bool = True  # entity expansion of the question's own hits (titles + NER), one retrieval each
    question_top_k: int = 10
    sub_top_k: int = 8
    slot_candidates: int = 2
    bridge_from_top: int = 3
    bridge_entities: int = 5
    bridge_top_k: int = 4
    bridge_template: str = "{entity} {question}"  # hop-2 query per candidate; {question} = the question
    question_weight: float = 1.0
    sub_weight: float = 1.0
    bridge_weight: float = 1.0
    max_evidence: int = 10
    filter_threshold: float = -2.0  # FILTER_CE after each sub-question retrieval; below -1 = off
    grade_steps: bool = False  # record a CRAG grade per retrieval step in the trace
    max_sub_questions: int = 5
    max_deps: int = 2
    max_top_k: int = 20
    max_fanout: int = 5
    max_entities: int = 8

    def limits(self) -> PlanLimits:
        return PlanLimits(
            max_sub_questions=self.max_sub_questions,
            max_deps=self.max_deps,
            max_top_k=self.max_top_k,
            max_fanout=self.max_fanout,
            max_entities=self.max_entities,
            max_evidence=max(PlanLimits().max_evidence, self.max_evidence),
        )

    def compile_settings(self) -> CompileSettings:
        return CompileSettings(
            question_top_k=self.question_top_k,
            sub_top_k=self.sub_top_k,
            slot_candidates=self.slot_candidates,
            max_evidence=self.max_evidence,
            filter_threshold=self.filter_threshold if self.filter_threshold >= -1.0 else None,
            bridge_from_top=self.bridge_from_top,
            bridge_entities=self.bridge_entities,
            bridge_top_k=self.bridge_top_k,
            bridge_template=self.bridge_template,
            question_weight=self.question_weight,
            sub_weight=self.sub_weight,
            bridge_weight=self.bridge_weight,
        )


def multihop_settings(context: Any) -> MultihopSettings:
    """MultihopSettings from `multihop_<name>` attributes of the context; missing ones keep their default."""
    defaults = asdict(MultihopSettings())
    return MultihopSettings(
        **{name: getattr(context, PREFIX + name, value) for name, value in defaults.items()}
    )
