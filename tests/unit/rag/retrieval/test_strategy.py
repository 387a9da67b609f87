"""Latency-budget tiers from measured / prior latencies, and query-based strategy recommendations."""

import threading

import pytest

from rag.retrieval.analysis import analyse
from rag.retrieval.strategy import (
    PRIOR_MS,
    STRATEGY_BM25,
    STRATEGY_GRAPH,
    STRATEGY_HYBRID,
    STRATEGY_HYBRID_EXPANSION,
    STRATEGY_MULTIHOP,
    TECH_BM25,
    TECH_DENSE,
    TECH_LLM_EXPANSION,
    TECH_RERANK,
    TIER_LOOSE,
    TIER_MEDIUM,
    TIER_TIGHT,
    LatencyStats,
    choose_for_budget,
    recommend,
)
from stores.bm25 import BM25Index

CORPUS = [
    "The Eiffel Tower in Paris was designed by the company of Gustave Eiffel.",
    "Paris is the capital and most populous city of France.",
    "France is a country in Western Europe with a long history.",
    "The city of Paris hosts many museums, including the Louvre.",
    "Gustave Eiffel was a French civil engineer born in Dijon.",
    "Dijon is a city in eastern France, famous for its mustard.",
    "Books on the history of the city and the tower, read at night in France.",
    "A city guide to France at night, with history books about the tower.",
] + [f"Filler {i}: books read at night about the tower, the city and the history of France." for i in range(12)]


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    index = BM25Index()
    index.add(list(range(len(CORPUS))), CORPUS)
    return index


def stats_with(**ms: float) -> LatencyStats:
    stats = LatencyStats()
    for name, value in ms.items():
        for _ in range(3):
            stats.record(name, value)
    return stats


def test_p50_is_the_median_of_recorded_samples_and_none_before():
    stats = LatencyStats(window=3)
    assert stats.p50("bm25") is None
    for ms in (1.0, 9.0, 2.0, 3.0):  # the window keeps the last three
        stats.record("bm25", ms)
    assert stats.p50("bm25") == 3.0
    assert stats.estimate("dense") == (PRIOR_MS[TECH_DENSE], "prior")


def test_record_is_thread_safe():
    stats = LatencyStats(window=10_000)
    threads = [threading.Thread(target=lambda: [stats.record("x", 1.0) for _ in range(500)]) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert stats.count("x") == 4000


def test_budget_chooses_the_richest_tier_that_fits():
    stats = stats_with(**{TECH_BM25: 1.0, TECH_DENSE: 20.0, TECH_RERANK: 100.0, TECH_LLM_EXPANSION: 1000.0})
    # medium = bm25 1 + dense 20 + fusion 2 + multi_query 5 + prf 3 + entities 15 + class alpha 0.3 + metadata 1
    # + graph 10 (priors) = 57.3
    assert choose_for_budget(5, stats).tier == TIER_TIGHT
    medium = choose_for_budget(60, stats)
    assert medium.tier == TIER_MEDIUM and medium.estimated_ms == pytest.approx(57.3)
    assert "57.3 ms" in medium.reason and "dense 20.0" in medium.reason and "(prior)" in medium.reason
    assert choose_for_budget(2000, stats).tier == TIER_MEDIUM  # query2doc / hyde priors: 2000 ms each
    assert choose_for_budget(6000, stats).tier == TIER_LOOSE
    assert choose_for_budget(None, stats).tier == TIER_LOOSE


def test_measured_latencies_change_the_choice():
    slow_dense = stats_with(**{TECH_DENSE: 200.0})
    assert choose_for_budget(100, slow_dense).tier == TIER_TIGHT
    assert choose_for_budget(100, LatencyStats()).tier == TIER_MEDIUM
    hopeless = choose_for_budget(0.5, stats_with(**{TECH_BM25: 4.0}))
    assert hopeless.tier == TIER_TIGHT and "below" in hopeless.reason


def test_recommends_bm25_for_an_exact_token_lookup(bm25):
    query = "Louvre ISBN-978"
    recommendation = recommend(analyse(query, bm25))
    assert recommendation.strategy == STRATEGY_BM25
    assert STRATEGY_HYBRID in [name for name, _, _ in recommendation.alternatives]
    assert 0 <= recommendation.confidence <= 1


def test_recommends_hybrid_for_a_semantic_question(bm25):
    query = "Which history books, read at night, are about the tower in the city of Paris, France?"
    recommendation = recommend(analyse(query, bm25))
    assert recommendation.strategy == STRATEGY_HYBRID
    assert recommendation.confidence == pytest.approx(0.8)
    assert "semantic" in recommendation.reason


def test_recommends_multihop_for_a_bridge_question(bm25):
    query = "In which city was the engineer born who designed the tower that stands in Paris?"
    recommendation = recommend(analyse(query, bm25))
    assert recommendation.strategy == STRATEGY_MULTIHOP
    assert all(conf < recommendation.confidence for _, conf, _ in recommendation.alternatives)


def test_recommends_expansion_when_terms_are_unknown(bm25):
    query = "Where is the Eifel towr?"
    recommendation = recommend(analyse(query, bm25))
    assert recommendation.strategy == STRATEGY_HYBRID_EXPANSION
    assert recommendation.as_dict()["alternatives"]


def test_recommends_the_graph_for_a_question_about_named_things(bm25):
    query = "Paris, France and Europe?"  # names, but not a rare-token lookup
    recommendation = recommend(analyse(query, bm25))
    assert recommendation.strategy == STRATEGY_GRAPH
