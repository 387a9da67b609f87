"""The on-disk index bundle: manifest, SQLite docstore, BM25, FAISS and the entity field, written atomically.

Every change (build, add, delete) is made in a temporary copy beside the bundle, checksummed, then swapped in by
renames, so a crash, a full disk or Ctrl-C leaves the previous bundle usable. One writer at a time: a change holds
an exclusive lock (fcntl.flock on `.NAME.lock` beside the bundle, since the bundle folder itself is renamed) from
reading the current bundle to the swap, so a second `cragraph index` on the same folder waits for the first (and
says so) instead of overwriting its change. Temporary folders left by a killed writer (`.NAME.tmp-PID`,
`.NAME.old-PID` whose process is gone) are removed by the next writer.
The manifest's `roots` are the corpus folders (absolute) the documents' ids are relative to: a file indexed again
by another path (`cragraph index corpus/en/a.md` after `cragraph index corpus`) gets the same id and replaces
itself. Bundles written before the entity field existed still open (with an empty field, `has_entities` False); the
next `add` runs NER over their chunks (no re-embedding) in the same atomic rewrite. The entity-passage graph
(stores.entity_graph) is derived from the entity field and the vectors and rebuilt on every write; a bundle from
before it gets it on its next `add`, even one with nothing new to add.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from models.embedder import Embedder, canonical_name, load_embedder
from stores.bm25 import BM25Index
from stores.dense import DenseIndex
from stores.docstore import DOCSTORE_FILE, DocStore
from stores.entity_graph import KNN, EntityGraph, neighbour_matrix
from stores.entity_index import EntityIndex
from stores.ingest import changed_documents, document_hash, embedded_chunks
from stores.loaders import load_documents, page_base, stale_pages
from stores.ner import backend_name, chunk_entities
from stores.skeleton import skeleton_entities
from stores.types import Document

FORMAT = "cragraph-index"
FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"
BM25_FOLDER = "bm25"
ENTITIES_FOLDER = "entities"
GRAPH_FOLDER = "graph"

LOCK_TIMEOUT_SECONDS = 3600.0
"""How long a writer waits for another writer of the same bundle before giving up (CRAGRAPH_INDEX_LOCK_TIMEOUT
overrides; 0 refuses at once)."""

log = logging.getLogger("cragraph.index")


class BundleError(Exception):
    """A bundle that cannot be used: missing, foreign, corrupted or built by another embedder."""


@dataclass
class IndexSettings:
    """Build settings, recorded in the manifest so an index can be rebuilt the same way."""

    embedder: str = "e5-small"
    min_chars: int = 120
    max_chars: int = 500
    merge_threshold: float = 0.58
    whole_doc_chars: int = 1200
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    hnsw_threshold: int = 50_000
    entities: bool = True
    ner_share: float = 1.0  # skeleton indexing: the central share of chunks that gets full NER (stores.skeleton)
    """Run NER at index time and keep the entity field (off: faster builds, no entity retrieval signal)."""


@dataclass
class IngestReport:
    documents_added: int = 0
    documents_replaced: int = 0
    documents_unchanged: int = 0
    documents_deleted: int = 0
    chunks_added: int = 0
    chunks_deleted: int = 0
    entities_backfilled: int = 0
    graph_backfilled: bool = False
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        parts = [f"{self.documents_added} documents added ({self.chunks_added} chunks)"]
        if self.documents_replaced:
            parts.append(f"{self.documents_replaced} replaced")
        if self.documents_unchanged:
            parts.append(f"{self.documents_unchanged} unchanged")
        if self.documents_deleted:
            parts.append(f"{self.documents_deleted} deleted ({self.chunks_deleted} chunks)")
        if self.entities_backfilled:
            parts.append(f"entities found for {self.entities_backfilled} existing chunks")
        if self.graph_backfilled:
            parts.append("entity-passage graph built for the existing chunks")
        parts.append(f"{len(self.skipped)} skipped")
        return ", ".join(parts) + f" in {self.seconds:.1f} s"


class IndexBundle:
    """An opened bundle. Read it freely; change it only through `build`, `add` and `delete`."""

    def __init__(self, path: Path, manifest: dict[str, Any], docstore: DocStore, bm25: BM25Index,
                 dense: DenseIndex, entities: EntityIndex | None = None, graph: EntityGraph | None = None):
        self.path = path
        self.graph = graph  # None: built before the graph existed, or without the entity field
        self.manifest = manifest
        self.docstore = docstore
        self.bm25 = bm25
        self.dense = dense
        self.entities = entities if entities is not None else EntityIndex()

    @property
    def has_entities(self) -> bool:
        """Whether this bundle carries the entity field (bundles from before it, or built without NER, do not)."""
        return "entities" in self.manifest

    @property
    def settings(self) -> IndexSettings:
        return IndexSettings(**self.manifest["settings"])

    @property
    def embedder(self) -> Embedder:
        return load_embedder(self.settings.embedder)

    def close(self) -> None:
        self.docstore.close()

    # ---- opening -------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, embedder: str | None = None) -> IndexBundle:
        """Open and verify a bundle; `embedder`, when given, must be the one the bundle was built with."""
        path = Path(path)
        _recover_interrupted_swap(path)
        manifest = _read_manifest(path)
        built_with = manifest["settings"]["embedder"]
        if embedder and canonical_name(embedder) != canonical_name(built_with):
            raise BundleError(
                f"{path} was built with embedder {built_with!r}, not {embedder!r}; its vectors are not comparable. "
                f"Use --embedder {built_with} or build a new index."
            )
        _verify_checksums(path, manifest)
        settings = IndexSettings(**manifest["settings"])
        try:
            bm25 = BM25Index.load(path / BM25_FOLDER)
            dense = DenseIndex.load(path, manifest["embedder"]["dim"], hnsw_threshold=settings.hnsw_threshold)
            entities = EntityIndex.load(path / ENTITIES_FOLDER) if "entities" in manifest else None
            graph = EntityGraph.load(path / GRAPH_FOLDER) if "graph" in manifest else None
        except Exception as error:  # a file that passed its checksum but still does not load
            raise BundleError(f"{path}: index files do not load ({error}); rebuild the index") from error
        return cls(path, manifest, DocStore(path / DOCSTORE_FILE), bm25, dense, entities, graph)

    # ---- changing ------------------------------------------------------------------------------------------

    @classmethod
    def build(cls, path: str | Path, sources: Sequence[str | Path], settings: IndexSettings | None = None,
              progress: bool = True, follow_symlinks: bool = False) -> tuple[IndexBundle, IngestReport]:
        """Build a new bundle from files or folders, replacing any bundle at `path` only once it is complete."""
        path = Path(path)
        settings = settings or IndexSettings()
        loaded = load_documents(sources, follow_symlinks=follow_symlinks, roots=())
        if not loaded.documents:
            reasons = "; ".join(f"{source}: {reason}" for source, reason in loaded.skipped[:5])
            raise BundleError(f"no readable documents in {', '.join(map(str, sources))}"
                              + (f" (skipped {len(loaded.skipped)}: {reasons})" if reasons else "")
                              + (f"; the index at {path} is unchanged" if path.exists() else ""))
        report = IngestReport(skipped=list(loaded.skipped))

        def write(folder: Path) -> dict[str, Any]:
            embedder = load_embedder(settings.embedder)
            stores = _empty_stores(folder, settings, embedder.dim)
            _ingest(stores, loaded.documents, settings, embedder, report, progress)
            return {**_finish(folder, settings, embedder, stores), "roots": loaded.roots}

        with writer_lock(path):
            _atomic_write(path, write, start_from_existing=False)
            return cls.open(path), report

    def add(self, sources: Sequence[str | Path] | None = None, documents: Sequence[Document] = (),
            progress: bool = True, follow_symlinks: bool = False) -> IngestReport:
        """Add files/folders or documents; a document whose id exists is replaced if its text changed.

        On a bundle without the entity field (built before it existed) this also finds the entities of every
        existing chunk, so `bundle.add()` with nothing to add upgrades it."""
        loaded = (load_documents(sources, follow_symlinks=follow_symlinks, roots=self.manifest.get("roots", []))
                  if sources else None)
        docs = [*(loaded.documents if loaded else []), *documents]
        report = IngestReport(skipped=list(loaded.skipped) if loaded else [])
        with writer_lock(self.path):
            self._refresh()
            return self._add(docs, report, progress, loaded.roots if loaded else [])

    def _add(self, docs: list[Document], report: IngestReport, progress: bool,
             new_roots: Sequence[str] = ()) -> IngestReport:
        existing = self.docstore.document_hashes()
        settings = self.settings
        backfill = settings.entities and not self.has_entities
        unchanged = all(existing.get(d.id) == document_hash(d) for d in docs) and not stale_pages(docs, existing)
        if unchanged and not backfill and (self.graph is not None or not settings.entities):
            report.documents_unchanged = len(docs)
            return report

        def write(folder: Path) -> dict[str, Any]:
            stores = _open_stores(folder, self.manifest)
            if backfill:
                stores.entities = EntityIndex()
            _ingest(stores, docs, settings, self.embedder, report, progress)
            if backfill:
                report.entities_backfilled = _backfill_entities(stores, progress)
            report.graph_backfilled = self.graph is None and stores.entities is not None
            roots = list(dict.fromkeys([*self.manifest.get("roots", []), *new_roots]))
            return {**_finish(folder, settings, self.embedder, stores), "roots": roots}

        self._rewrite(write)
        return report

    def delete(self, doc_ids: Sequence[str]) -> IngestReport:
        """Delete documents (all their chunks) by id; unknown ids are reported as skipped."""
        with writer_lock(self.path):
            self._refresh()
            return self._delete(doc_ids)

    def _delete(self, doc_ids: Sequence[str]) -> IngestReport:
        report = IngestReport()
        settings = self.settings

        def write(folder: Path) -> dict[str, Any]:
            stores = _open_stores(folder, self.manifest)
            known = stores.docstore.document_ids()
            # a PDF's file id ("report.pdf") deletes all its pages ("report.pdf#p1", ...)
            wanted = [page for d in doc_ids for page in
                      ([d] if d in known else sorted(k for k in known if page_base(k) == d) or [d])]
            report.skipped = [(d, "no such document in the index") for d in wanted if d not in known]
            _remove(stores, [d for d in wanted if d in known], report)
            report.documents_deleted = len([d for d in wanted if d in known])
            return {**_finish(folder, settings, self.embedder, stores), "roots": self.manifest.get("roots", [])}

        self._rewrite(write)
        return report

    def _refresh(self) -> None:
        """Reopen when another writer changed the bundle since this object opened it (called under the writer
        lock, so the change is made on top of the newest bundle, never on a stale copy)."""
        try:
            current = _read_manifest(self.path)
        except BundleError:
            current = None
        if current != self.manifest:
            self.docstore.close()
            reopened = IndexBundle.open(self.path)
            self.__dict__.update(reopened.__dict__)

    def _rewrite(self, write: Callable[[Path], dict[str, Any]]) -> None:
        self.docstore.close()
        try:
            _atomic_write(self.path, write, start_from_existing=True)
        finally:
            reopened = IndexBundle.open(self.path)
            self.__dict__.update(reopened.__dict__)


# ---- internals -----------------------------------------------------------------------------------------------


@dataclass
class _Stores:
    docstore: DocStore
    bm25: BM25Index
    dense: DenseIndex
    entities: EntityIndex | None  # None: this bundle keeps no entity field


def _empty_stores(folder: Path, settings: IndexSettings, dim: int) -> _Stores:
    return _Stores(DocStore(folder / DOCSTORE_FILE), BM25Index(k1=settings.bm25_k1, b=settings.bm25_b),
                   DenseIndex(dim, hnsw_threshold=settings.hnsw_threshold),
                   EntityIndex() if settings.entities else None)


def _open_stores(folder: Path, manifest: dict[str, Any]) -> _Stores:
    settings = IndexSettings(**manifest["settings"])
    return _Stores(DocStore(folder / DOCSTORE_FILE), BM25Index.load(folder / BM25_FOLDER),
                   DenseIndex.load(folder, manifest["embedder"]["dim"], hnsw_threshold=settings.hnsw_threshold),
                   EntityIndex.load(folder / ENTITIES_FOLDER) if "entities" in manifest else None)


def _ingest(stores: _Stores, docs: Sequence[Document], settings: IndexSettings, embedder: Embedder,
            report: IngestReport, progress: bool) -> None:
    started = time.perf_counter()
    fresh, replaced, gone, unchanged = changed_documents(docs, stores.docstore.document_hashes())
    report.documents_unchanged += unchanged
    if replaced:
        _remove(stores, replaced, report)
        report.documents_replaced = len(replaced)
    if gone:  # pages a re-read PDF no longer has
        _remove(stores, gone, report)
        report.documents_deleted += len(gone)
    report.documents_added = len(fresh) - len(replaced)
    chunks, vectors = embedded_chunks(fresh, embedder, settings, progress)
    if chunks:
        passages = [c.passage for c in chunks]
        first = stores.docstore.next_row()
        rows = list(range(first, first + len(chunks)))
        stores.docstore.add(rows, chunks)
        stores.bm25.add(rows, passages)
        stores.dense.add(rows, vectors)
        if stores.entities is not None:
            known = stores.entities.vocabulary() if settings.ner_share < 1.0 else ()
            _store_entities(stores, rows, skeleton_entities(chunks, vectors, settings.ner_share, known, progress))
    report.chunks_added = len(chunks)
    report.seconds = time.perf_counter() - started


def _store_entities(stores: _Stores, rows: Sequence[int], entities: Sequence[list[str]]) -> None:
    assert stores.entities is not None
    stores.docstore.set_entities(rows, entities)
    stores.entities.add(rows, entities)


def _backfill_entities(stores: _Stores, progress: bool) -> int:
    """NER over the chunks that have no entry in the entity field yet (a bundle from before it); returns how
    many. Only entities are computed: chunks, BM25 and vectors stay as they are."""
    assert stores.entities is not None
    missing = [(row, chunk) for row, chunk in stores.docstore.iter_rows() if not stores.entities.has_row(row)]
    if missing:
        rows = [row for row, _ in missing]
        _store_entities(stores, rows, chunk_entities([chunk for _, chunk in missing], progress=progress))
    return len(missing)


def _remove(stores: _Stores, doc_ids: Sequence[str], report: IngestReport) -> None:
    rows = stores.docstore.delete_documents(doc_ids)
    stores.bm25.delete(rows)
    stores.dense.delete(rows)
    if stores.entities is not None:
        stores.entities.delete(rows)
    report.chunks_deleted += len(rows)


def _finish(folder: Path, settings: IndexSettings, embedder: Embedder, stores: _Stores) -> dict[str, Any]:
    """Save every store into `folder` and return the manifest describing them."""
    (folder / BM25_FOLDER).mkdir(exist_ok=True)
    files = [f"{BM25_FOLDER}/{name}" for name in stores.bm25.save(folder / BM25_FOLDER)]
    files += stores.dense.save(folder)
    entities = _entities_summary(stores) if stores.entities is not None else None
    graph = None
    if stores.entities is not None:
        files += [f"{ENTITIES_FOLDER}/{name}" for name in stores.entities.save(folder / ENTITIES_FOLDER)]
        graph = _graph_of(stores)
        files += [f"{GRAPH_FOLDER}/{name}" for name in graph.save(folder / GRAPH_FOLDER)]
    documents = len(stores.docstore.document_ids())
    chunks = len(stores.docstore)
    stores.docstore.close()
    files.append(DOCSTORE_FILE)
    if not (len(stores.bm25) == len(stores.dense) == chunks):
        raise BundleError(f"internal error: {chunks} chunks, {len(stores.bm25)} BM25 rows, "
                          f"{len(stores.dense)} vectors")
    if stores.entities is not None and len(stores.entities) != chunks:
        raise BundleError(f"internal error: {chunks} chunks, {len(stores.entities)} rows in the entity field")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "embedder": {"name": embedder.name, "dim": embedder.dim},
        "counts": {"documents": documents, "chunks": chunks},
        "dense_index": stores.dense.kind,
        **({"entities": entities} if entities is not None else {}),
        **({"graph": {"nodes": {"chunks": len(graph.rows), "entities": len(graph.entities)},
                      "edges": graph.edge_counts}} if graph is not None else {}),
        "settings": asdict(settings),
        "files": {name: _file_digest(folder / name) for name in sorted(files)},
        "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _graph_of(stores: _Stores) -> EntityGraph:
    """The entity-passage graph, rebuilt from the entity field and the stored vectors on every write."""
    assert stores.entities is not None
    rows = [row for row, _ in stores.docstore.iter_rows()]
    neighbours = None
    if stores.dense.kind == "hnsw":  # an exact all-pairs pass is quadratic: the index's own search instead
        neighbours = neighbour_matrix(*stores.dense.neighbour_lists(rows, KNN))
    return EntityGraph.build(rows, stores.entities.entities_of(rows), stores.dense.vectors_for(rows),
                             neighbours=neighbours)


def _entities_summary(stores: _Stores) -> dict[str, Any]:
    """What the manifest records about the entity field: coverage and which NER served each language."""
    assert stores.entities is not None
    languages = sorted({str(value or "und") for value in stores.docstore.metadata_values("language")})
    return {
        "chunks_with_entities": stores.entities.rows_with_entities,
        "distinct_entities": stores.entities.vocabulary_size,
        "ner": {language: backend_name(language) for language in languages},
    }


def _atomic_write(path: Path, write: Callable[[Path], dict[str, Any]], start_from_existing: bool) -> None:
    """Run `write` in a temporary folder beside `path`, then swap it in; on any failure, `path` is untouched.
    Called under the writer lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _recover_interrupted_swap(path)
    remove_stale_temporaries(path)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    old = path.parent / f".{path.name}.old-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        if start_from_existing:
            shutil.copytree(path, tmp)
            (tmp / MANIFEST_FILE).unlink()
        else:
            tmp.mkdir()
        manifest = write(tmp)
        _write_json_durably(tmp / MANIFEST_FILE, manifest)
    except BaseException as error:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(error, OSError):
            raise BundleError(f"could not write the index at {path} ({error}); the previous index, if any, "
                              f"is unchanged") from error
        raise
    if path.exists():
        if (path / MANIFEST_FILE).exists() or not any(path.iterdir()):
            os.rename(path, old)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            raise BundleError(f"{path} exists and is not a cragraph index; refusing to replace it")
    os.rename(tmp, path)
    shutil.rmtree(old, ignore_errors=True)


def _recover_interrupted_swap(path: Path) -> None:
    """A crash between the two renames leaves only `.name.old-PID`: put it back.

    A live writer is between those renames for a moment too, so the restore happens under the writer lock
    (waiting for that writer, after which the bundle is there again and nothing is restored)."""
    if path.exists() or not _olds(path):
        return
    with writer_lock(path):
        olds = _olds(path)
        if not path.exists() and olds and (olds[-1] / MANIFEST_FILE).exists():
            log.warning("restoring %s from an interrupted update (%s)", path, olds[-1].name)
            os.rename(olds[-1], path)


def _olds(path: Path) -> list[Path]:
    if not path.parent.exists():
        return []
    return sorted(path.parent.glob(f".{path.name}.old-*"), key=lambda p: p.stat().st_mtime)


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove `.NAME.tmp-PID` and `.NAME.old-PID` folders whose writer process is gone (a build killed with
    kill -9 or a power cut); returns what was removed. Call under the writer lock: then no live writer of this
    bundle owns them. An `.old` folder is kept while it is the only copy (no bundle at `path`)."""
    removed = []
    for leftover in [*path.parent.glob(f".{path.name}.tmp-*"), *path.parent.glob(f".{path.name}.old-*")]:
        pid_text = leftover.name.rpartition("-")[2]
        if not pid_text.isdigit() or (int(pid_text) != os.getpid() and _process_alive(int(pid_text))):
            continue
        if ".old-" in leftover.name and not path.exists():
            continue
        shutil.rmtree(leftover, ignore_errors=True)
        log.warning("removed %s left by an interrupted update", leftover)
        removed.append(leftover)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


_HELD: set[tuple[str, int]] = set()
"""(lock file, thread id) pairs this process holds: a recovery inside a write must not wait for itself."""


@contextmanager
def writer_lock(path: str | Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the exclusive writer lock of the bundle at `path`, waiting (with a warning naming the holder) for a
    writer in another process or thread. Raises BundleError after `timeout` seconds (default
    LOCK_TIMEOUT_SECONDS, or CRAGRAPH_INDEX_LOCK_TIMEOUT). The lock dies with its process, so kill -9 never
    leaves a bundle locked."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_file = path.parent / f".{path.name}.lock"
    key = (str(lock_file.resolve()), threading.get_ident())
    if key in _HELD:
        yield
        return
    if timeout is None:
        timeout = float(os.environ.get("CRAGRAPH_INDEX_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS))
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_flock(fd):
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "another process"
            log.warning("the index at %s is being written by process %s; waiting for it to finish (up to %.0f s)",
                        path, holder, timeout)
            deadline = time.monotonic() + timeout
            while not _try_flock(fd):
                if time.monotonic() >= deadline:
                    raise BundleError(f"the index at {path} is being written by process {holder}; gave up "
                                      f"after {timeout:.0f} s. Nothing was changed: run the command again when "
                                      f"that one has finished.")
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def embedder_of(path: str | Path) -> str:
    """The name of the embedder a bundle was built with, read from its manifest alone."""
    return str(_read_manifest(Path(path))["settings"]["embedder"])


def _read_manifest(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise BundleError(f"no index at {path}; build one with `cragraph index PATH... --index {path}`")
    if not (path / MANIFEST_FILE).is_file():
        raise BundleError(f"{path} is not a cragraph index (no {MANIFEST_FILE})")
    try:
        manifest = json.loads((path / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BundleError(f"{path / MANIFEST_FILE} is corrupted ({error})") from error
    if manifest.get("format") != FORMAT:
        raise BundleError(f"{path} is not a cragraph index (format {manifest.get('format')!r})")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BundleError(f"{path} has index format version {version}; this cragraph reads version "
                          f"{FORMAT_VERSION}. Rebuild the index with this version.")
    return manifest


def _verify_checksums(path: Path, manifest: dict[str, Any]) -> None:
    problems = []
    for name, expected in manifest["files"].items():
        file = path / name
        if not file.is_file():
            problems.append(f"{name} is missing")
        elif file.stat().st_size != expected["bytes"]:
            problems.append(f"{name} has {file.stat().st_size} bytes, expected {expected['bytes']} (truncated?)")
        elif _file_digest(file)["sha256"] != expected["sha256"]:
            problems.append(f"{name} does not match its checksum")
    if problems:
        raise BundleError(f"{path} is damaged: " + "; ".join(problems) + ". Rebuild the index.")


def _file_digest(file: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"sha256": digest.hexdigest(), "bytes": file.stat().st_size}


def _write_json_durably(file: Path, data: dict[str, Any]) -> None:
    with open(file, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.flush()
        os.fsync(handle.fileno())


_OPEN: dict[tuple[str, int], IndexBundle] = {}
_OPEN_LOCK = threading.Lock()


def load_bundle(path: str | Path) -> IndexBundle:
    """The bundle at `path`, opened (and verified) once per process and reopened when it changes on disk."""
    path = Path(path).resolve()
    manifest = path / MANIFEST_FILE
    key = (str(path), manifest.stat().st_mtime_ns if manifest.exists() else 0)
    with _OPEN_LOCK:
        if key not in _OPEN:
            for stale in [k for k in _OPEN if k[0] == key[0]]:
                _OPEN.pop(stale).close()
            _OPEN[key] = IndexBundle.open(path)
        return _OPEN[key]
