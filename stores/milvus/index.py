"""MilvusIndex: the index in a Milvus collection, read through the same attributes as an IndexBundle.

`docstore`, `bm25`, `dense`, `entities`, `graph`, `embedder`, `settings`, `manifest` and `path` are what the
retriever, the techniques and the graph nodes read from a bundle, so `HybridRetriever(MilvusIndex.open(uri))`
runs the project's own fusion over Milvus' BM25 and dense searches. Writes (`build`, `add`, `delete`) chunk,
embed (through the embedding cache) and find entities exactly as the bundle does, then insert and delete rows:
Milvus indexes new rows itself, so nothing is rebuilt. Unlike the bundle a write is not atomic: the manifest is
written last, and a write that fails midway is repaired by running the same `cragraph index` again (documents
whose content hash is stored are skipped, the others replaced).

The entity field is stored per chunk (an ARRAY field); the entity index and the entity-passage graph that
entity retrieval walks are derived from it and the vectors in memory, on first use.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from models.embedder import Embedder, canonical_name, load_embedder
from stores.bundle import IndexSettings, IngestReport
from stores.entity_graph import EntityGraph
from stores.entity_index import EntityIndex
from stores.ingest import changed_documents, embedded_chunks
from stores.loaders import load_documents, page_base
from stores.milvus.connection import MilvusError, connect, is_lite
from stores.milvus.filters import filter_expression
from stores.milvus.schema import (
    BM25_TERMS,
    DEFAULT_COLLECTION,
    FORMAT,
    FORMAT_VERSION,
    chunk_record,
    create_collections,
    drop_collections,
    read_manifest,
    tokenizer_of,
    vector_dim,
    write_manifest,
)
from stores.milvus.views import Collection, MilvusBM25, MilvusDense, MilvusDocStore
from stores.skeleton import skeleton_entities
from stores.types import Document

INSERT_BATCH = 512
log = logging.getLogger("cragraph.index")


class MilvusIndex:
    """An opened Milvus index. Read it freely; change it only through `build`, `add` and `delete`."""

    backend = "milvus"

    def __init__(self, uri: str, collection: str, client: Any, manifest: dict[str, Any]):
        self.uri = uri
        self.collection = collection
        self.client = client
        self.manifest = manifest
        self.path = Path(uri)  # where thresholds and caches keyed by an index's place look (a URL: nothing there)
        self._views()

    def _views(self) -> None:
        handle = Collection(self.client, self.collection, lambda: int(self.manifest["next_row"]))
        settings = self.settings
        self.docstore = MilvusDocStore(handle)
        self.bm25 = MilvusBM25(handle, self.manifest["milvus"]["bm25_terms"], settings.bm25_k1, settings.bm25_b)
        self.dense = MilvusDense(handle, int(self.manifest["embedder"]["dim"]))
        self._entities: EntityIndex | None = None
        self._graph: EntityGraph | None = None

    def __repr__(self) -> str:
        return f"MilvusIndex(uri={self.uri!r}, collection={self.collection!r})"

    @property
    def location(self) -> str:
        return f"{self.uri} (collection {self.collection})"

    @property
    def settings(self) -> IndexSettings:
        return IndexSettings(**self.manifest["settings"])

    @property
    def has_entities(self) -> bool:
        return "entities" in self.manifest

    @property
    def embedder(self) -> Embedder:
        """The index's embedder; refused when its dimension is not the collection's."""
        embedder = load_embedder(self.settings.embedder)
        if embedder.dim != int(self.manifest["embedder"]["dim"]):
            raise MilvusError(f"{self.location} holds {self.manifest['embedder']['dim']}-dimensional vectors, but "
                              f"embedder {self.settings.embedder!r} gives {embedder.dim}; rebuild the index")
        return embedder

    @property
    def entities(self) -> EntityIndex:
        """The entity index over the stored entity field (built in memory on first use)."""
        if self._entities is None:
            entities = EntityIndex()
            pairs = list(self.docstore.iter_entities()) if self.has_entities else []
            if pairs:
                entities.add([row for row, _ in pairs], [names for _, names in pairs])
            self._entities = entities
        return self._entities

    @property
    def graph(self) -> EntityGraph | None:
        """The entity-passage graph (exact neighbours), derived on first use; None without the entity field."""
        if self._graph is None and self.has_entities:
            pairs = list(self.docstore.iter_entities())
            rows = [row for row, _ in pairs]
            self._graph = EntityGraph.build(rows, [names for _, names in pairs], self.dense.vectors_for(rows))
        return self._graph

    def close(self) -> None:
        """Nothing to release: the client is shared per URI by pymilvus (Milvus Lite stops with the process)."""

    # ---- opening -------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, uri: str, embedder: str | None = None, collection: str = DEFAULT_COLLECTION) -> MilvusIndex:
        """Open an index; `embedder`, when given, must be the one it was built with."""
        client = connect(uri)
        manifest = _checked_manifest(client, uri, collection)
        built_with = manifest["settings"]["embedder"]
        if embedder and canonical_name(embedder) != canonical_name(built_with):
            raise MilvusError(f"{uri} (collection {collection}) was built with embedder {built_with!r}, not "
                              f"{embedder!r}; its vectors are not comparable. Use --embedder {built_with} or build "
                              f"a new index.")
        return cls(uri, collection, client, manifest)

    @classmethod
    def exists(cls, uri: str, collection: str = DEFAULT_COLLECTION) -> bool:
        """Whether a collection of that name is there (a Milvus Lite file that does not exist is not created)."""
        if is_lite(uri) and not Path(uri).expanduser().exists():
            return False
        return bool(connect(uri).has_collection(collection))

    def refresh(self) -> bool:
        """Re-read the manifest; True (and fresh views) when another writer changed the index."""
        current = _checked_manifest(self.client, self.uri, self.collection)
        if current == self.manifest:
            return False
        self.manifest = current
        self._views()
        return True

    # ---- changing ------------------------------------------------------------------------------------------

    @classmethod
    def build(cls, uri: str, sources: Sequence[str | Path], settings: IndexSettings | None = None,
              progress: bool = True, follow_symlinks: bool = False, collection: str = DEFAULT_COLLECTION,
              bm25_terms: str = "cragraph") -> tuple[MilvusIndex, IngestReport]:
        """Build a new index from files or folders, replacing any collection of that name."""
        if bm25_terms not in BM25_TERMS:
            raise ValueError(f"unknown bm25_terms {bm25_terms!r}; expected one of {', '.join(BM25_TERMS)}")
        settings = settings or IndexSettings()
        client = connect(uri)  # first: an unreachable server fails before anything is read or written
        loaded = load_documents(sources, follow_symlinks=follow_symlinks, roots=())
        if not loaded.documents:
            reasons = "; ".join(f"{source}: {reason}" for source, reason in loaded.skipped[:5])
            raise MilvusError(f"no readable documents in {', '.join(map(str, sources))}"
                              + (f" (skipped {len(loaded.skipped)}: {reasons})" if reasons else "")
                              + f"; the index at {uri} is unchanged")
        embedder = load_embedder(settings.embedder)
        drop_collections(client, collection)
        create_collections(client, collection, embedder.dim, settings.bm25_k1, settings.bm25_b)
        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "embedder": {"name": embedder.name, "dim": embedder.dim},
            "settings": asdict(settings),
            "milvus": {"bm25_terms": bm25_terms, "tokenizer": tokenizer_of(bm25_terms)},
            "counts": {"documents": 0, "chunks": 0}, "next_row": 1, "roots": loaded.roots,
            **({"entities": {}} if settings.entities else {}),
        }
        index = cls(uri, collection, client, manifest)
        report = IngestReport(skipped=list(loaded.skipped))
        index._ingest(loaded.documents, report, embedder, progress)
        return index, report

    def add(self, sources: Sequence[str | Path] | None = None, documents: Sequence[Document] = (),
            progress: bool = True, follow_symlinks: bool = False) -> IngestReport:
        """Add files/folders or documents; a document whose id exists is replaced if its text changed."""
        self.refresh()
        loaded = (load_documents(sources, follow_symlinks=follow_symlinks, roots=self.manifest.get("roots", []))
                  if sources else None)
        report = IngestReport(skipped=list(loaded.skipped) if loaded else [])
        roots = list(dict.fromkeys([*self.manifest.get("roots", []), *(loaded.roots if loaded else [])]))
        new_roots = roots != self.manifest.get("roots", [])
        self.manifest["roots"] = roots
        if not self._ingest([*(loaded.documents if loaded else []), *documents], report, self.embedder, progress) \
                and new_roots:
            self._finish()  # nothing to index, but ids of later adds are relative to the new folder too
        return report

    def delete(self, doc_ids: Sequence[str]) -> IngestReport:
        """Delete documents (all their chunks) by id; unknown ids are reported as skipped."""
        self.refresh()
        started = time.perf_counter()
        report = IngestReport()
        known = self.docstore.document_ids()
        wanted = [page for d in doc_ids for page in
                  ([d] if d in known else sorted(k for k in known if page_base(k) == d) or [d])]
        report.skipped = [(d, "no such document in the index") for d in wanted if d not in known]
        present = [d for d in wanted if d in known]
        report.chunks_deleted = self._remove(present)
        report.documents_deleted = len(present)
        self._finish()
        report.seconds = time.perf_counter() - started
        return report

    # ---- internals -----------------------------------------------------------------------------------------

    def _ingest(self, docs: Sequence[Document], report: IngestReport, embedder: Embedder, progress: bool) -> bool:
        """Index `docs` (skipping unchanged ones, replacing changed ones); True when the index was written."""
        started = time.perf_counter()
        settings = self.settings
        fresh, replaced, gone, unchanged = changed_documents(docs, self.docstore.document_hashes())
        report.documents_unchanged += unchanged
        report.chunks_deleted += self._remove([*replaced, *gone])  # gone: pages a re-read PDF no longer has
        report.documents_replaced, report.documents_deleted = len(replaced), report.documents_deleted + len(gone)
        report.documents_added = len(fresh) - len(replaced)
        chunks, vectors = embedded_chunks(fresh, embedder, settings, progress)
        if chunks:
            entities: list[list[str]] = [[] for _ in chunks]
            if settings.entities:
                known = self.entities.vocabulary() if settings.ner_share < 1.0 else ()
                entities = skeleton_entities(chunks, vectors, settings.ner_share, known, progress)
            first = int(self.manifest["next_row"])
            terms_mode = self.manifest["milvus"]["bm25_terms"]
            records = [chunk_record(first + i, chunk, vector, names, terms_mode)
                       for i, (chunk, vector, names) in enumerate(zip(chunks, vectors, entities, strict=True))]
            batches = range(0, len(records), INSERT_BATCH)
            for start in tqdm(batches, desc="milvus insert", unit="batch", disable=not progress or len(batches) < 2):
                self.client.insert(self.collection, records[start:start + INSERT_BATCH])
            self.manifest["next_row"] = first + len(records)
        report.chunks_added = len(chunks)
        wrote = bool(chunks or replaced or gone or "updated_at" not in self.manifest)
        if wrote:
            self._finish()
        report.seconds = time.perf_counter() - started
        return wrote

    def _remove(self, doc_ids: Sequence[str]) -> int:
        """Delete every chunk of the given documents; returns how many chunks went."""
        if not doc_ids:
            return 0
        expression = filter_expression({"doc_id": list(doc_ids)})
        count = len(self.docstore.filter_rows({"doc_id": list(doc_ids)}))
        self.client.delete(self.collection, filter=expression)
        return count

    def _finish(self) -> None:
        """Seal the written rows, record counts and the time of this write in the manifest (written last) and drop
        derived views."""
        # Rows stay in a growing segment until flushed, and Milvus Lite rebuilds that segment's BM25 index on every
        # search: 3,000 unflushed chunks cost ~300 ms per BM25 query here, ~10 ms once sealed.
        self.client.flush(self.collection)
        manifest = dict(self.manifest)
        documents = self.docstore.document_ids()
        chunks = len(self.docstore)
        manifest["counts"] = {"documents": len(documents), "chunks": chunks}
        if self.has_entities:
            manifest["entities"] = {"chunks_with_entities": sum(1 for _, names in self.docstore.iter_entities()
                                                                if names)}
        manifest["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        manifest["write"] = time.time_ns()  # tells two writes in one second apart
        write_manifest(self.client, self.collection, manifest)
        self.manifest = manifest
        self._views()


def _checked_manifest(client: Any, uri: str, collection: str) -> dict[str, Any]:
    """The collection's manifest, verified: a cragraph index of this format whose vectors have the recorded
    dimension. MilvusError saying what to do otherwise."""
    where = f"{uri} (collection {collection})"
    if not client.has_collection(collection):
        raise MilvusError(f"no index at {where}; build one with `cragraph index PATH... --backend milvus "
                          f"--uri {uri}`")
    manifest = read_manifest(client, collection)
    if manifest is None or manifest.get("format") != FORMAT:
        raise MilvusError(f"{where} is not a cragraph index (no cragraph manifest)")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise MilvusError(f"{where} has index format version {manifest.get('format_version')}; this cragraph "
                          f"reads version {FORMAT_VERSION}. Rebuild the index with this version.")
    dim = vector_dim(client, collection)
    if dim != int(manifest["embedder"]["dim"]):
        raise MilvusError(f"{where} holds {dim}-dimensional vectors, but was recorded as built with "
                          f"{manifest['embedder']['name']!r} ({manifest['embedder']['dim']} dimensions); rebuild "
                          f"the index")
    return manifest
