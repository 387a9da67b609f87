"""Retrieval techniques on a tiny index: each one on and off, the Query2Doc / HyDE gate, metadata boosts, the
latency-budget tier and strategy=auto, as the retrieve node and the graph use them."""

from __future__ import annotations

from dataclasses import replace

import pytest
from langgraph.runtime import Runtime

from nodes._runtime import bundle_of
from nodes.retrieve import retrieve
from rag.retrieval.analysis import analyse
from rag.retrieval.retriever import HybridRetriever, RetrievalSettings
from rag.retrieval.strategy import LATENCY_STATS, apply_strategy, choose_strategy
from rag.retrieval.techniques import Techniques, run_techniques
from tests.fixtures.graph import build_tiny_index, context, use_operator

QUESTION = "Which river flows into the Caspian Sea?"


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("techniques-index"), tiny_embedder_dir)


@pytest.fixture()
def retriever(index):
    ctx = context(index)
    return HybridRetriever(bundle_of(ctx), RetrievalSettings())


def bm25_only(retriever: HybridRetriever) -> HybridRetriever:
    return HybridRetriever(retriever.bundle, replace(retriever.settings, mode="bm25"))


def ids(run) -> list[str]:
    return [hit.chunk.id for hit in run.hits]


def test_with_every_technique_off_the_result_is_the_hybrid_search(retriever):
    run = run_techniques(retriever, QUESTION, "en", Techniques(), k=4)
    assert ids(run) == [hit.chunk.id for hit in retriever.search(QUESTION, k=4)]
    assert run.applied == [] and run.skipped == {}


def test_multi_query_fixes_a_misspelling_against_the_corpus_and_reports_its_variants(retriever):
    question = "Which rivr flows into the Caspain Sea?"
    off = run_techniques(bm25_only(retriever), question, "en", Techniques(), k=3)
    on = run_techniques(bm25_only(retriever), question, "en", Techniques(multi_query=True), k=3)
    assert "multi_query" in on.applied and "multi_query" not in off.applied
    assert any("spelling" in note for note in on.notes)
    assert ids(on)[0].startswith("volga")
    assert any(source.startswith("variant:") for hit in on.hits for source in hit.sources)


def test_multi_query_is_skipped_when_no_variant_differs(retriever):
    run = run_techniques(retriever, "Tokyo", "en", Techniques(multi_query=True), k=3, variants=["Tokyo"])
    assert "multi_query" not in run.applied
    assert "no rule variant" in run.skipped["multi_query"]


def test_rm3_adds_a_feedback_list_with_its_terms_in_the_notes(retriever):
    run = run_techniques(retriever, "river flows", "en", Techniques(prf=True, prf_docs=3, prf_terms=4), k=4)
    assert "prf" in run.applied
    assert any(note.startswith("RM3 terms:") for note in run.notes)
    assert any("rm3" in hit.sources for hit in run.hits)


def test_entities_search_the_entity_field_only_when_the_question_names_one(retriever):
    assert retriever.bundle.has_entities
    named = run_techniques(retriever, "Which fortress stands in Kazan?", "en", Techniques(entity_retrieval=True), k=3)
    assert "entities" in named.applied and any(note.startswith("entities ['kazan']") for note in named.notes)
    found = {hit.chunk.doc_id for hit in named.hits if "entities" in hit.sources}
    assert found >= {"kazan"}
    question = "which fortress stands by the river?"
    unnamed = run_techniques(retriever, question, "en", Techniques(entity_retrieval=True), k=3)
    assert unnamed.skipped["entities"] == "the question names no entity"
    assert ids(unnamed) == ids(run_techniques(retriever, question, "en", Techniques(), k=3))


def test_query_class_alpha_names_the_class_and_its_dense_weight(retriever):
    run = run_techniques(retriever, QUESTION, "en", Techniques(query_class_alpha=True), k=3)
    assert run.query_class in ("term-heavy", "semantic", "mixed")
    assert any(note.startswith(f"query class {run.query_class}") for note in run.notes)


def test_expansions_stay_off_while_the_first_pass_is_strong(retriever):
    calls = []
    run = run_techniques(retriever, QUESTION, "en", Techniques(query2doc=True, hyde=True, expansion_gate=-1.0),
                         k=3, write_pseudo_doc=lambda kind, q, lang: calls.append(kind) or "text")
    assert calls == [] and "gate closed" in run.skipped["query2doc"] and "gate closed" in run.skipped["hyde"]


def test_expansions_run_when_the_first_pass_is_weak_and_say_why(retriever):
    calls = []

    def write(kind: str, question: str, language: str) -> str:
        calls.append(kind)
        return "The Volga flows into the Caspian Sea near Astrakhan."

    techniques = Techniques(query2doc=True, hyde=True, expansion_gate=2.0)
    run = run_techniques(retriever, QUESTION, "en", techniques, k=3, write_pseudo_doc=write)
    assert calls == ["query2doc", "hyde"]
    assert {"query2doc", "hyde"} <= set(run.applied)
    assert any("first pass weak" in note for note in run.notes)
    assert any("hyde" in hit.sources for hit in run.hits)


def test_a_failed_regrade_opens_the_gate_and_a_missing_model_is_reported(retriever):
    techniques = Techniques(query2doc=True, expansion_gate=-1.0)
    run = run_techniques(retriever, QUESTION, "en", techniques, k=3, weak_reason="graded incorrect in round 0")
    assert run.skipped["query2doc"] == "no chat model to write the pseudo document"
    empty = run_techniques(retriever, QUESTION, "en", techniques, k=3, weak_reason="graded incorrect",
                           write_pseudo_doc=lambda kind, q, lang: None)
    assert "no usable pseudo document" in empty.skipped["query2doc"]

    def unreachable(kind: str, question: str, language: str) -> str:
        raise ConnectionError("no route to the provider")

    failed = run_techniques(retriever, QUESTION, "en", techniques, k=3, weak_reason="graded incorrect",
                            write_pseudo_doc=unreachable)
    assert failed.skipped["query2doc"] == "the chat model failed: ConnectionError: no route to the provider"
    assert ids(failed) == ids(run_techniques(retriever, QUESTION, "en", Techniques(), k=3))


def test_metadata_boost_moves_matching_chunks_up(retriever):
    question = "Which river flows into the Caspian Sea?"
    plain = run_techniques(bm25_only(retriever), question, "en", Techniques(), k=5)
    assert ids(plain)[0].startswith("volga") and "kazan#0" in ids(plain)
    boosted = run_techniques(bm25_only(retriever), question, "en",
                             Techniques(metadata_boost={"doc_id": "kazan"}, metadata_boost_weight=100.0), k=5)
    assert ids(boosted)[0].startswith("kazan")
    assert "metadata_boost" in boosted.applied and "1 of" in boosted.notes[-1]


def test_category_boost_is_skipped_without_category_metadata(retriever):
    run = run_techniques(retriever, QUESTION, "en", Techniques(category_boost=True), k=3)
    assert "no 'category' metadata" in run.skipped["category_boost"]


def test_category_boost_ranks_up_the_predicted_category(tmp_path, tiny_embedder_dir):
    from stores.bundle import IndexBundle
    from tests.fixtures.graph import DOCS

    docs = [{**doc, "category": "geo.rivers" if doc["id"] in ("volga", "thames") else "science"} for doc in DOCS]
    docs += [{"id": f"town{i}", "title": f"Town {i}", "text": f"Town {i} lies on a river.", "category": "geo.towns"}
             for i in range(3)]
    bundle = IndexBundle.open(build_tiny_index(tmp_path, tiny_embedder_dir, docs))
    retriever = HybridRetriever(bundle)
    question = "Thames"
    techniques = Techniques(category_boost=True, category_min_confidence=0.0, metadata_boost_weight=100.0)
    run = run_techniques(retriever, question, "en", techniques, k=9)
    assert "metadata_boost" in run.applied and run.notes[0].startswith("predicted category:")
    boosted = [hit for hit in run.hits if "metadata_boost" in hit.scores]
    assert boosted and run.hits[: len(boosted)] == boosted  # every boosted hit outranks every other
    bundle.close()


def test_the_retrieve_node_traces_techniques_and_returns_the_strategy(index):
    use_operator(techniques={"multi_query": True, "prf": True}, rerank={"retrieve_k": 4})
    ctx = context(index)
    update = retrieve({"question": "Which rivr flows into the Caspian Sea?"}, Runtime(context=ctx))
    record = update["trace"][0]
    assert {"multi_query", "prf"} <= set(record["techniques"])
    assert "RM3 terms" in record["note"]
    assert update["strategy"]["name"] == "manual"


def test_a_tight_budget_means_bm25_only_and_no_rerank(index):
    ctx = context(index, latency_budget_ms=0.001)
    strategy = choose_strategy(analyse(QUESTION, bundle_of(ctx).bm25), ctx.strategy, ctx.latency_budget_ms)
    assert strategy["tier"] == "tight" and strategy["mode"] == "bm25" and strategy["rerank"] is False
    techniques = apply_strategy(Techniques(multi_query=True), strategy)
    assert techniques.multi_query is False
    assert "budget" in strategy["reason"]


def test_a_loose_budget_allows_everything_and_measured_latencies_change_the_choice(index):
    ctx = context(index, latency_budget_ms=60_000.0)
    strategy = choose_strategy(analyse(QUESTION, bundle_of(ctx).bm25), ctx.strategy, ctx.latency_budget_ms)
    assert strategy["tier"] == "loose" and strategy["rerank"] is True
    assert apply_strategy(Techniques(query2doc=True), strategy).query2doc is True
    LATENCY_STATS.clear()
    try:
        for _ in range(5):
            LATENCY_STATS.record("rerank", 120_000.0)  # a rerank measured far slower than the budget
        slower = choose_strategy(analyse(QUESTION, bundle_of(ctx).bm25), ctx.strategy, ctx.latency_budget_ms)
        assert slower["tier"] == "medium" and slower["rerank"] is False
    finally:
        LATENCY_STATS.clear()


def test_auto_strategy_recommends_multihop_for_a_bridge_question(index):
    ctx = context(index, strategy="auto")
    question = "Which is older, the Volga bridge or the Thames bridge?"
    strategy = choose_strategy(analyse(question, bundle_of(ctx).bm25), "auto")
    assert strategy["name"] == "multihop" and 0 < strategy["confidence"] <= 1
    assert any(a["name"] == "hybrid" for a in strategy["alternatives"])


def test_recommend_only_ends_the_graph_after_the_route(index):
    from graph import graph

    result = graph.invoke({"question": QUESTION, "recommend_only": True}, context=context(index, strategy="auto"))
    assert [entry["node"] for entry in result["trace"]] == ["understand", "route"]
    assert result["strategy"]["name"] in ("bm25", "hybrid", "hybrid+expansion", "graph", "multihop")
    assert "answer" not in result


def test_an_unknown_strategy_is_refused(index):
    with pytest.raises(ValueError, match="manual or auto"):
        choose_strategy(analyse(QUESTION, bundle_of(context(index)).bm25), "fastest")
