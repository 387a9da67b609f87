"""Peer baselines over the same index bundle: what users already know, on the same chunks and embedder.

- LangChainEnsemble: langchain_classic's EnsembleRetriever over langchain_community's BM25Retriever (its default
  whitespace tokens) and a FAISS vector store built from the bundle's stored vectors, weights 0.5 / 0.5 (the
  usual tutorial set-up). Our embedder is wrapped as LangChain `Embeddings` to embed the queries.
- RankBM25: rank-bm25's BM25Okapi over our own tokens (stores.tokenize), the reference BM25 implementation.
- binary_grade: the LangGraph CRAG tutorial's grader, one yes/no per passage. Here it is our evaluator's score
  cut at one threshold; any "no" would send the question to web search (the caller records that), and the
  passages graded "no" are dropped. No knowledge strips.

Each retriever returns our `Hit` records so the same answer node answers from every peer's passages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from cragraph_lab.extra import bench_import
from stores.bundle import IndexBundle
from stores.tokenize import tokenize
from stores.types import Chunk, Hit

BINARY_CUT = 0.0  # evaluator scores live in [-1, 1]; 0 is the calibrated midpoint between irrelevant and relevant


class EmbedderEmbeddings(Embeddings):
    """Our Embedder (with its query / passage prefixes) as a LangChain Embeddings."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return np.asarray(self.embedder.embed_passages(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return np.asarray(self.embedder.embed_queries([text])[0]).tolist()


def bundle_chunks(bundle: IndexBundle) -> tuple[list[int], list[Chunk]]:
    """Every chunk of the bundle with its row id, in row order."""
    rows, chunks = [], []
    for row, chunk in bundle.docstore.iter_rows():
        rows.append(row)
        chunks.append(chunk)
    return rows, chunks


class LangChainEnsemble:
    """EnsembleRetriever(BM25Retriever, FAISS) with weights 0.5 / 0.5 over the bundle's chunks."""

    name = "langchain-ensemble"

    def __init__(self, bundle: IndexBundle, weights: Sequence[float] = (0.5, 0.5), pool: int = 10) -> None:
        EnsembleRetriever = bench_import("langchain_classic.retrievers").EnsembleRetriever
        BM25Retriever = bench_import("langchain_community.retrievers").BM25Retriever
        FAISS = bench_import("langchain_community.vectorstores").FAISS

        rows, chunks = bundle_chunks(bundle)
        self._chunks = {c.id: c for c in chunks}
        texts = [c.passage for c in chunks]
        metadatas = [{"chunk_id": c.id} for c in chunks]
        vectors = np.asarray(bundle.dense.vectors_for(rows), dtype=np.float32)
        self.bm25 = BM25Retriever.from_texts(texts, metadatas=metadatas, k=pool)
        store = FAISS.from_embeddings(list(zip(texts, vectors.tolist(), strict=True)),
                                      EmbedderEmbeddings(bundle.embedder), metadatas=metadatas)
        self.vector = store.as_retriever(search_kwargs={"k": pool})
        self.ensemble = EnsembleRetriever(retrievers=[self.bm25, self.vector], weights=list(weights))

    def search(self, question: str, k: int = 10) -> list[Hit]:
        documents = self.ensemble.invoke(question)[:k]
        return [Hit(chunk=self._chunks[d.metadata["chunk_id"]], score=1.0 / rank, sources=["ensemble"])
                for rank, d in enumerate(documents, start=1)]


class RankBM25:
    """rank-bm25's BM25Okapi over our tokens (same tokenization as our BM25; the reference implementation)."""

    name = "rank-bm25"

    def __init__(self, bundle: IndexBundle) -> None:
        _, self._chunks = bundle_chunks(bundle)
        self.okapi = bench_import("rank_bm25").BM25Okapi([tokenize(c.passage) or ["\u2205"] for c in self._chunks])

    def search(self, question: str, k: int = 10) -> list[Hit]:
        scores = self.okapi.get_scores(tokenize(question))
        top = np.argsort(-scores, kind="stable")[:k]
        return [Hit(chunk=self._chunks[i], score=float(scores[i]), scores={"bm25": float(scores[i])},
                    sources=["bm25okapi"]) for i in top]


def binary_grade(grades: Sequence[float], cut: float = BINARY_CUT) -> list[bool]:
    """The tutorial's yes / no per passage: relevant when the evaluator's score is at least `cut`."""
    return [float(g) >= cut for g in grades]
