"""Two real `cragraph index` processes on one index folder at once (issue 14): before the writer lock both
exited 0 and one change was lost (8 of 8 pairs); now the second waits, says so, and both changes land."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from stores.bundle import IndexBundle

CRAGRAPH = str(Path(sys.executable).parent / "cragraph")


def _corpus(folder: Path, prefix: str, count: int) -> set[str]:
    folder.mkdir(parents=True)
    records = [
        {"id": f"{prefix}{i}", "text": f"The river {prefix} number {i} flows past the old bridge."}
        for i in range(count)
    ]
    (folder / "docs.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return {r["id"] for r in records}


def test_an_add_and_a_delete_at_once_both_land(tmp_path: Path, tiny_embedder_dir: Path) -> None:
    first = _corpus(tmp_path / "a", "a", 12)
    added = _corpus(tmp_path / "c", "c", 6)
    index = tmp_path / "index"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CRAGRAPH_CACHE_DIR": str(tmp_path / "cache")}
    base = [CRAGRAPH, "index", "--quiet", "--index", str(index)]
    subprocess.run(
        [*base, "--embedder", str(tiny_embedder_dir), str(tmp_path / "a")], env=env, check=True, capture_output=True
    )
    deleted = sorted(first)[:4]
    adder = subprocess.Popen([*base, str(tmp_path / "c")], env=env, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    remover = subprocess.Popen([*base, "--delete", *deleted], env=env, stderr=subprocess.PIPE, text=True)
    outcomes = [
        (process.wait(timeout=300), process.stderr.read() if process.stderr else "") for process in (adder, remover)
    ]
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    bundle = IndexBundle.open(index)
    assert bundle.docstore.document_ids() == (first | added) - set(deleted)
    bundle.close()
