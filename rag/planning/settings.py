"""Settings of the multi-hop planner: the `[multihop]` section of the operator configuration."""

from __future__ import annotations

from dataclasses import dataclass

from rag.planning.plan import CompileSettings, PlanLimits
from rag.settings import model_setting, setting


@dataclass
class MultihopSettings:
    """Defaults suit the embedded models: rule decomposition plus entity bridging, no LLM calls."""

    llm_decompose: bool = setting(
        False, "Ask the chat model for the sub-question DAG (the embedded 135M model rarely gives a valid one)."
    )
    decompose_model: str = model_setting("", "Chat model for the planner's LLM steps; empty = chat_model.")
    llm_compile: bool = setting(
        False, "Let the chat model compile the plan (validated; the deterministic compiler is the fallback)."
    )
    llm_extract: bool = setting(False, "EXTRACT_ANSWER through the chat model, else extractive.")
    llm_synthesize: bool = setting(False, "SYNTHESIZE a draft answer with the chat model.")
    rule_decompose: bool = setting(True, "Rule-based bridge / comparison decomposition as a fallback.")
    bridge: bool = setting(
        True, "Entity bridge: titles and entities of the question's top passages become hop-2 queries."
    )
    question_top_k: int = setting(10, "Passages retrieved for the whole question.")
    sub_top_k: int = setting(8, "Passages retrieved per sub-question.")
    slot_candidates: int = setting(2, "Values extracted per slot and substituted into later hops.")
    bridge_from_top: int = setting(3, "Top passages the bridge takes entity candidates from.")
    bridge_entities: int = setting(5, "Entity candidates the bridge retrieves for.")
    bridge_top_k: int = setting(4, "Passages retrieved per bridge entity.")
    bridge_template: str = setting(
        "{entity} {question}", "Hop-2 query per bridge entity; {question} is the question."
    )
    max_evidence: int = setting(10, "Evidence passages the plan hands to selection.")
    graph_expand: bool = setting(
        True, "GRAPH_EXPAND: re-rank the merged evidence by a walk over the index's entity-passage graph, "
              "seeded from it (passes the evidence through unchanged on an index without a graph).")
    max_sub_questions: int = setting(5, "Largest DAG the validator accepts.")
    max_deps: int = setting(2, "Most dependencies per sub-question.")
    max_top_k: int = setting(20, "Clamp for any step's top_k.")
    max_fanout: int = setting(5, "Clamp for MAP_RETRIEVE fan-out.")
    max_entities: int = setting(8, "Clamp for EXTRACT_ENTITIES.")

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
            bridge_from_top=self.bridge_from_top,
            bridge_entities=self.bridge_entities,
            bridge_top_k=self.bridge_top_k,
            bridge_template=self.bridge_template,
            graph_expand=self.graph_expand,
        )
