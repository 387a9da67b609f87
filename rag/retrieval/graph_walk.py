"""The `graph` retrieval mode: a ranked list re-ranked by personalized PageRank over the entity-passage graph.

HippoRAG 2's recipe without an LLM: the walk starts from the list's best passages (weighted by their min-max
normalized scores) and from the graph entities the question names (each weighted by 1 / the passages naming
it), spreads along mention, co-occurrence, synonym and neighbour edges (stores.entity_graph), and passages are
ranked by the mass they end with. A passage two hops away through a shared, rare entity (the bridge of a
multi-hop question) rises; one that only resembles the question's words falls. The plan runtime's
GRAPH_EXPAND step runs the same walk seeded from a plan's merged evidence.

The walk reaches a bridge's second passage only through a name both passages carry. The second hop searches
for it by meaning as well: the walk's best passage is appended to the question and searched again (dense), as
multi-hop dense retrieval does with a question and its first hop, and that list is fused with the walk's by
reciprocal rank fusion (README "The graph retrieval mode").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.retrieval.fusion import ranked, reciprocal_rank_fusion
from rag.retrieval.retriever import HybridRetriever
from rag.settings import setting
from stores.ner import query_entities
from stores.types import Hit

SEED_FLOOR = 1e-3
"""Added to every normalized seed weight, so the weakest seed passage still starts the walk."""
WALK_WEIGHT = 2.0
"""The walk's list against the second hop's in their rank fusion: the walk ranks by the question's names and five
seed passages, the second hop by one dense query built on the walk's best guess, so the walk's order leads
(chosen on the training splits; cragraph_lab/notes/lab-notes.md)."""


@dataclass
class GraphSettings:
    """How the graph walk runs."""

    damping: float = setting(
        0.8, "Share of the walk's mass that follows edges at each step (the rest returns to the seeds).")
    seed_passages: int = setting(5, "How many of the best passages of the list seed the walk.")
    second_hop: bool = setting(
        True, "Search again with the walk's best passage appended to the question (dense) and fuse that list with "
        "the walk's by reciprocal rank fusion, the walk weighted higher: the second hop of a bridge question is "
        "named in its first passage.")


@dataclass
class GraphRanking:
    hits: list[Hit]
    note: str
    walked: bool = True


def seed_rows(retriever: HybridRetriever, seeds: Sequence[Hit]) -> dict[int, float]:
    """Row -> seed weight: the passages' min-max normalized scores, plus SEED_FLOOR."""
    rows_of = retriever.bundle.docstore.rows_of([hit.chunk.id for hit in seeds])
    scores = np.asarray([hit.score for hit in seeds], dtype=np.float64)
    span = float(scores.max() - scores.min()) if len(scores) else 0.0
    weights = (scores - scores.min()) / span if span > 0 else np.ones(len(scores))
    return {rows_of[hit.chunk.id]: float(w) + SEED_FLOOR
            for hit, w in zip(seeds, weights, strict=True) if hit.chunk.id in rows_of}


def graph_rerank(retriever: HybridRetriever, question: str, language: str, hits: Sequence[Hit], k: int,
                 settings: GraphSettings | None = None, filters: Mapping[str, Any] | None = None) -> GraphRanking:
    """`hits` re-ranked (and extended) by the walk; the list unchanged, with the reason, when there is no walk."""
    settings = settings or GraphSettings()
    graph = retriever.bundle.graph
    if graph is None:
        why = (f"no entity-passage graph in this index (`cragraph index --index {retriever.bundle.path}` builds "
               "it once): kept the hybrid ranking")
        return GraphRanking(list(hits)[:k], why, walked=False)
    row_seeds = seed_rows(retriever, list(hits)[: max(settings.seed_passages, 0)])
    names = query_entities(question, language)
    entities = graph.entity_ids(names)
    rows, mass = graph.walk(row_seeds, entities, settings.damping, allowed=retriever.allowed_rows(filters))
    if not len(rows):
        return GraphRanking(list(hits)[:k], "nothing to start the walk from: kept the hybrid ranking", walked=False)
    found = {hit.chunk.id: hit for hit in hits}
    walked: list[Hit] = []
    for chunk, score in zip(retriever.bundle.docstore.get(rows[:k].tolist()), mass[:k].tolist(), strict=True):
        before = found.get(chunk.id)
        scores_of = {**(before.scores if before else {}), "ppr": score}
        sources = [*(before.sources if before else []), "graph"]
        walked.append(Hit(chunk=chunk, score=score, scores=scores_of, sources=sources))
    if entities:
        note = f"graph walk from {len(row_seeds)} passages and the entities {[graph.entities[i] for i in entities]}"
    else:
        why = f"no entity of {names} is in the graph" if names else "the question names no entity"
        note = f"graph walk from {len(row_seeds)} passages alone ({why})"
    if settings.second_hop and walked:
        walked = second_hop(retriever, question, walked, k, filters)
        note += "; second hop: the question with the walk's best passage searched again, fused by rank"
    return GraphRanking(walked, note)


def second_hop(retriever: HybridRetriever, question: str, walked: Sequence[Hit], k: int,
               filters: Mapping[str, Any] | None = None) -> list[Hit]:
    """`walked` fused by reciprocal rank (weighted WALK_WEIGHT to 1) with a dense search for the question followed
    by the walk's best passage (cut to the retriever's query limit; the embedder reads the question first either
    way)."""
    query = f"{question}\n{walked[0].chunk.text}"[: retriever.settings.max_query_chars]
    found = retriever.search(query, k=k, mode="dense", filters=filters)
    fused = reciprocal_rank_fusion([[hit.chunk.id for hit in walked], [hit.chunk.id for hit in found]],
                                   weights=[WALK_WEIGHT, 1.0])
    by_walk, by_hop = {hit.chunk.id: hit for hit in walked}, {hit.chunk.id: hit for hit in found}
    merged = []
    for chunk_id in ranked(fused)[:k]:
        before, again = by_walk.get(chunk_id), by_hop.get(chunk_id)
        scores = {**(before.scores if before else {}), **({"second_hop": again.score} if again else {})}
        sources = [*(before.sources if before else []), *(["second_hop"] if again else [])]
        chunk = (before or by_hop[chunk_id]).chunk
        merged.append(Hit(chunk=chunk, score=fused[chunk_id], scores=scores, sources=sources))
    return merged
