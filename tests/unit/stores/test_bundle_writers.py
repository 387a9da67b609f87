"""Regression tests for issue 14: two writers of one bundle never lose a change (the second waits for the
writer lock, then writes on top of the first's result), and folders left by a killed writer are cleaned up."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import stores.bundle as bundle_module
from stores.bundle import BundleError, IndexBundle, IndexSettings, writer_lock
from stores.types import Document

DOCS = [
    {"id": "volga", "title": "Volga", "text": "The Volga flows into the Caspian Sea."},
    {"id": "thames", "title": "Thames", "text": "The Thames flows through London."},
]


@pytest.fixture
def index(tmp_path: Path, tiny_embedder_dir: Path) -> Path:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "c.jsonl").write_text("\n".join(json.dumps(d) for d in DOCS) + "\n", encoding="utf-8")
    settings = IndexSettings(embedder=str(tiny_embedder_dir), entities=False)
    bundle, _ = IndexBundle.build(tmp_path / "index", [corpus], settings, progress=False)
    bundle.close()
    return tmp_path / "index"


def test_concurrent_add_and_delete_both_land(index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_finish = bundle_module._finish

    def slow_finish(*args, **kwargs):  # widen the window in which the two writers overlap
        time.sleep(0.5)
        return real_finish(*args, **kwargs)

    monkeypatch.setattr(bundle_module, "_finish", slow_finish)
    adder, deleter = IndexBundle.open(index), IndexBundle.open(index)
    errors: list[BaseException] = []

    def run(action) -> None:
        try:
            action()
        except BaseException as error:  # surfaced by the assertion below
            errors.append(error)

    threads = [
        threading.Thread(
            target=run,
            args=(
                lambda: adder.add(
                    documents=[Document(id="neva", text="The Neva flows through Saint Petersburg.")], progress=False
                ),
            ),
        ),
        threading.Thread(target=run, args=(lambda: deleter.delete(["thames"]),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    final = IndexBundle.open(index)
    assert final.docstore.document_ids() == {"volga", "neva"}
    assert final.manifest["counts"]["documents"] == 2
    for bundle in (adder, deleter, final):
        bundle.close()


def test_a_second_writer_waits_then_gives_up_clearly(index: Path) -> None:
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with writer_lock(index):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    try:
        started = time.monotonic()
        with pytest.raises(BundleError, match="being written by process"), writer_lock(index, timeout=0.3):
            pass
        assert 0.25 <= time.monotonic() - started < 5
    finally:
        release.set()
        thread.join()
    with writer_lock(index, timeout=0):  # free again
        pass


def test_leftovers_of_a_killed_writer_are_removed_by_the_next_one(index: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead_pid = int(dead.stdout)
    stale_tmp = index.parent / f".index.tmp-{dead_pid}"
    stale_old = index.parent / f".index.old-{dead_pid}"
    live_tmp = index.parent / ".index.tmp-1"  # pid 1 is alive: another writer's, left alone
    for folder in (stale_tmp, stale_old, live_tmp):
        folder.mkdir()
        (folder / "manifest.json").write_text("{}")
    bundle = IndexBundle.open(index)
    bundle.delete(["volga"])
    assert not stale_tmp.exists() and not stale_old.exists()
    assert live_tmp.exists()
    assert bundle.docstore.document_ids() == {"thames"}
    bundle.close()
