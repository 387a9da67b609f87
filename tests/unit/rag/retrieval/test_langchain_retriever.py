"""CragraphRetriever: a cragraph index as a LangChain retriever (invoke, filters, k, and a chain)."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from rag.retrieval.langchain_retriever import CragraphRetriever
from rag.retrieval.retriever import HybridRetriever
from stores.bundle import load_bundle
from tests.fixtures.graph import DOCS, build_tiny_index

DATED = [{**doc, "metadata": {"year": 2000 + i}} for i, doc in enumerate(DOCS)]


def test_invoke_returns_the_hybrid_search_as_documents(tmp_path, tiny_embedder_dir) -> None:
    index = build_tiny_index(tmp_path, tiny_embedder_dir)
    retriever = CragraphRetriever(index_path=str(index), k=3)

    documents = retriever.invoke("Which river flows into the Caspian Sea?")

    expected = HybridRetriever(load_bundle(index)).search("Which river flows into the Caspian Sea?", k=3)
    assert [d.id for d in documents] == [hit.chunk.id for hit in expected]
    assert all(isinstance(d, Document) for d in documents)
    first = documents[0]
    assert first.page_content == expected[0].chunk.text
    assert first.metadata["doc_id"] == expected[0].chunk.doc_id
    assert first.metadata["title"] == expected[0].chunk.title
    assert first.metadata["score"] == expected[0].score


def test_bm25_mode_and_filters_reach_the_search(tmp_path, tiny_embedder_dir) -> None:
    index = build_tiny_index(tmp_path, tiny_embedder_dir, DATED)

    by_words = CragraphRetriever(index_path=str(index), k=1, mode="bm25").invoke("polonium radium")
    assert [d.metadata["doc_id"] for d in by_words] == ["curie"]

    late = CragraphRetriever(index_path=str(index), k=5, filters={"year": {"gte": 2003}}).invoke("river")
    assert {d.metadata["doc_id"] for d in late} == {"kazan", "landau"}


def test_in_a_chain(tmp_path, tiny_embedder_dir) -> None:
    """The usual LangChain shape: retriever | a step that formats the passages."""
    index = build_tiny_index(tmp_path, tiny_embedder_dir)
    chain = CragraphRetriever(index_path=str(index), k=2, mode="bm25") | RunnableLambda(
        lambda docs: "\n".join(d.metadata["title"] for d in docs))
    assert chain.invoke("Tower Bridge London").splitlines()[0] == "Thames"
