"""The Milvus backend: the index held in one Milvus collection (Milvus Lite in a file, or a Milvus server).

One module per role, as in the bundle: connection (URIs and clear errors), filters (filter mappings -> Milvus
boolean expressions), schema (the collection and its manifest), views (the docstore / BM25 / dense faces the
retriever reads), index (MilvusIndex: open, build, add, delete). Nothing here imports the retrieval code: the
shared HybridRetriever reads a MilvusIndex through the same attributes it reads a bundle through.
"""
