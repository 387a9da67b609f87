"""The planning subgraph for multi-hop questions: decompose -> validate -> compile -> translate -> execute.

    START -> decompose -> validate --valid--> compile -> translate -> execute -> END
                 ^            |
                 '--invalid---'   (next source: LLM retry -> rules -> single-hop, which is always valid)

Input keys (MultihopInput): `question`, optional `filters`. Output keys (MultihopOutput):
- `knowledge`: evidence passages best first, in the main graph's passage-dict shape (what `select` reads),
  each with `plan_steps` naming the plan steps that found it; at most the plan's max_evidence.
- `evidence_hits`: the same evidence as Hit.to_dict() records.
- `facets`: the sub-question texts (slots still as {name}); coverage selection should cover each.
- `plan_dsl`: the executed plan as DSL text (replay it with `cragraph replay-plan`);
  `compiled_plan`: its JSON.
- `decomposition_source`: llm | llm_retry | rules | single; `multihop_answer`: SYNTHESIZE's draft answer.
- `trace`: one record per node run (decompose and validate may run up to 4 times).
Its own trace starts empty (the input schema has no `trace`), so as a node of the main graph it adds only its
records to the parent's `trace` list.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from nodes.multihop.compile import plan_compile
from nodes.multihop.decompose import decompose
from nodes.multihop.execute import plan_execute
from nodes.multihop.translate import plan_translate
from nodes.multihop.validate import plan_validate, route_after_validate
from rag.context import Context
from rag.policy import ClientContext
from rag.state import MultihopInput, MultihopOutput, MultihopState

__all__ = ["build_multihop_graph", "multihop_graph"]


def build_multihop_graph() -> StateGraph[MultihopState, Context, MultihopInput, MultihopOutput]:
    builder: StateGraph[MultihopState, Context, MultihopInput, MultihopOutput] = StateGraph(
        MultihopState, context_schema=ClientContext, input_schema=MultihopInput, output_schema=MultihopOutput
    )
    builder.add_node("decompose", decompose)
    builder.add_node("validate", plan_validate)
    builder.add_node("compile", plan_compile)
    builder.add_node("translate", plan_translate)
    builder.add_node("execute", plan_execute)
    builder.add_edge(START, "decompose")
    builder.add_edge("decompose", "validate")
    builder.add_conditional_edges("validate", route_after_validate, ["compile", "decompose", END])
    builder.add_edge("compile", "translate")
    builder.add_edge("translate", "execute")
    builder.add_edge("execute", END)
    return builder


multihop_graph = build_multihop_graph().compile()
multihop_graph.name = "cragraph-multihop"
