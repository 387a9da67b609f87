"""The collection layout: one row per chunk, and a small companion collection holding the index's manifest.

Chunk rows: `row` (INT64 primary key, never reused, the id the retriever ranks), `id`, `doc_id`, `title`,
`text`, `metadata` (JSON: what filters read), `entities` (the entity field), `vector` (the dense embedding,
FLAT inner product: exact, like the bundle below its HNSW threshold), `terms` (what BM25 reads) and `sparse`,
the BM25 vector Milvus' own BM25 function derives from `terms` (corpus statistics kept by Milvus, so adds and
deletes need no rebuild).

`terms` holds either our tokenizer's terms (stores.tokenize: stems, CJK bigrams, stopwords dropped), joined by
spaces for Milvus' standard analyzer to split again, or the raw passage for that analyzer alone (`\\w+`,
lower-cased, no stemming, a run of Chinese characters is one token); BM25_TERMS picks one per collection, and
the README's Milvus section says which retrieves better and by how much.

The manifest (format, embedder name and dimension, build settings, counts, the next row id) is one JSON
value in `<collection>_manifest`: Milvus wants a vector field in every collection, so it carries a 2-d dummy.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from stores.tokenize import TOKENIZER_VERSION, query_terms, tokenize
from stores.types import Chunk

FORMAT = "cragraph-milvus"
FORMAT_VERSION = 1
DEFAULT_COLLECTION = "cragraph"
BM25_TERMS = ("cragraph", "milvus")
"""cragraph: our tokenizer's terms (the default); milvus: Milvus' standard analyzer over the raw passage."""

MAX_TEXT_BYTES = 65_535
MAX_ID_BYTES = 2_048
MAX_ENTITIES = 4_096
MAX_ENTITY_BYTES = 1_024
_MANIFEST_KEY = "manifest"
CHUNK_FIELDS = ["row", "id", "doc_id", "title", "text", "metadata"]


def manifest_collection(collection: str) -> str:
    return f"{collection}_manifest"


def create_collections(client: Any, collection: str, dim: int, k1: float, b: float) -> None:
    """Create the chunk collection (with its BM25 function and both indexes) and the manifest collection."""
    with _quiet_lite_server():
        _create_collections(client, collection, dim, k1, b)


@contextmanager
def _quiet_lite_server() -> Iterator[None]:
    """pymilvus asks for a timestamp while waiting for an index, which Milvus Lite's in-process gRPC server does
    not implement: pymilvus carries on without it, but the server logs a traceback per index. Hide those."""
    logger = logging.getLogger("grpc._server")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _create_collections(client: Any, collection: str, dim: int, k1: float, b: float) -> None:
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("row", DataType.INT64, is_primary=True)
    schema.add_field("id", DataType.VARCHAR, max_length=MAX_ID_BYTES)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=MAX_ID_BYTES)
    schema.add_field("title", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
    schema.add_field("terms", DataType.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True,
                     analyzer_params={"tokenizer": "standard"})
    schema.add_field("metadata", DataType.JSON)
    schema.add_field("entities", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=MAX_ENTITIES,
                     max_length=MAX_ENTITY_BYTES)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["terms"],
                                 output_field_names=["sparse"]))
    indexes = client.prepare_index_params()
    indexes.add_index("vector", index_type="FLAT", metric_type="IP")
    indexes.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                      params={"bm25_k1": k1, "bm25_b": b})
    client.create_collection(collection, schema=schema, index_params=indexes, consistency_level="Strong")

    meta = client.create_schema(auto_id=False, enable_dynamic_field=False)
    meta.add_field("key", DataType.VARCHAR, is_primary=True, max_length=64)
    meta.add_field("value", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
    meta.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    meta_indexes = client.prepare_index_params()
    meta_indexes.add_index("vector", index_type="FLAT", metric_type="IP")
    client.create_collection(manifest_collection(collection), schema=meta, index_params=meta_indexes,
                             consistency_level="Strong")


def drop_collections(client: Any, collection: str) -> None:
    for name in (collection, manifest_collection(collection)):
        if client.has_collection(name):
            client.drop_collection(name)


def load_collections(client: Any, collection: str) -> None:
    """Load the collections for searching: Milvus keeps a collection released after a restart (Milvus Lite: in
    every new process) until asked, and refuses queries on it meanwhile."""
    for name in (collection, manifest_collection(collection)):
        if client.has_collection(name) and str(client.get_load_state(name).get("state", "")).endswith("NotLoad"):
            client.load_collection(name)


def read_manifest(client: Any, collection: str) -> dict[str, Any] | None:
    """The stored manifest, or None when the collection has none."""
    name = manifest_collection(collection)
    if not client.has_collection(name):
        return None
    load_collections(client, collection)
    found = client.query(name, filter=f'key == "{_MANIFEST_KEY}"', output_fields=["value"])
    return json.loads(found[0]["value"]) if found else None


def write_manifest(client: Any, collection: str, manifest: dict[str, Any]) -> None:
    client.upsert(manifest_collection(collection),
                  [{"key": _MANIFEST_KEY, "value": json.dumps(manifest, ensure_ascii=False), "vector": [0.0, 0.0]}])


def vector_dim(client: Any, collection: str) -> int | None:
    """The dimension of the collection's `vector` field as Milvus has it (None without such a field)."""
    for field in client.describe_collection(collection)["fields"]:
        if field["name"] == "vector":
            return int(field["params"]["dim"])
    return None


def bm25_terms(passage: str, mode: str) -> str:
    """What the `terms` field holds for a passage."""
    return " ".join(tokenize(passage)) if mode == "cragraph" else passage


def query_bm25_terms(query: str, mode: str) -> str:
    """What a query searches the `terms` field with (a Chinese query in both scripts: stores.tokenize)."""
    return " ".join(query_terms(query)) if mode == "cragraph" else query


def tokenizer_of(mode: str) -> str:
    return TOKENIZER_VERSION if mode == "cragraph" else "milvus-standard"


def chunk_record(row: int, chunk: Chunk, vector: Any, entities: list[str], terms_mode: str) -> dict[str, Any]:
    """One chunk as a row of the collection."""
    return {"row": int(row), "id": chunk.id, "doc_id": chunk.doc_id, "title": chunk.title, "text": chunk.text,
            "terms": bm25_terms(chunk.passage, terms_mode), "metadata": chunk.metadata,
            "entities": list(entities)[:MAX_ENTITIES], "vector": [float(x) for x in vector]}


def chunk_of(record: dict[str, Any]) -> Chunk:
    return Chunk(id=record["id"], doc_id=record["doc_id"], title=record["title"], text=record["text"],
                 metadata=dict(record.get("metadata") or {}))
