"""The hybrid retriever as a LangChain `BaseRetriever`, so chains and other LangChain code can use an index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LangChainDocument
from langchain_core.retrievers import BaseRetriever

from rag.retrieval.retriever import HybridRetriever, Mode, RetrievalSettings
from stores.bundle import load_bundle


class CragraphRetriever(BaseRetriever):
    """Hybrid BM25 + dense search over a cragraph index bundle, for chains that bring their own answer step.

    It is the search alone (as `cragraph search`), not the agent: no grading, multi-hop or web search. The bundle
    is opened once per process (load_bundle) and reopened when the index changes on disk. Each LangChain Document
    carries the chunk text as page_content and, in metadata, the chunk and document ids, title, the chunk's own
    metadata, and every retrieval score.
    """

    index_path: str
    k: int = 10
    mode: Mode = "hybrid"
    filters: dict[str, Any] | None = None
    settings: RetrievalSettings | None = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[LangChainDocument]:
        retriever = HybridRetriever(load_bundle(Path(self.index_path).expanduser()), self.settings)
        hits = retriever.search(query, k=self.k, mode=self.mode, filters=self.filters)
        return [
            LangChainDocument(
                page_content=hit.chunk.text,
                id=hit.chunk.id,
                metadata={**hit.chunk.metadata, "chunk_id": hit.chunk.id, "doc_id": hit.chunk.doc_id,
                          "title": hit.chunk.title, "score": hit.score, "scores": hit.scores,
                          "sources": hit.sources},
            )
            for hit in hits
        ]
