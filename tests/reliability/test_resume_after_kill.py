"""Durable runs (issue 17): `cragraph ask --thread T` keeps its run in a checkpoint store; a process killed with
SIGKILL mid-run is continued by `cragraph ask --thread T --resume` from its last checkpoint, not restarted.

Each store is tested with a real process over a tiny index: SQLite (the default store; always) and PostgreSQL (a
server started here from Debian's `postgresql` package on a Unix socket in a temporary folder; skipped, saying so,
where its binaries or the psycopg driver are missing). The run is killed as soon as a checkpoint after `understand`
is stored, while `retrieve` loads the embedder (seconds, even warm: torch and sentence-transformers are imported
there), so the kill lands mid-run without any test hook in the product code.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cragraph.cli.checkpoints import CHECKPOINT_ENV_VAR, CheckpointError, mask_url, open_checkpointer
from graph.builder import build_graph
from tests.fixtures.graph import DIRECTOR, FOLLOW_UP, KAPITSA_DOCS, build_tiny_index

CRAGRAPH = str(Path(sys.executable).parent / "cragraph")
THREAD = "durable-1"
# The tiny embedder's vectors are random: the cosine evaluator with the operator's thresholds grading every
# retrieval `correct` (_env), and the reader answering whatever its confidence, make the run's path fixed; the
# store is under test.
SETTINGS = ["--no-web", "--evaluator", "cosine", "--set", "answer_threshold=0"]
KILL_AFTER_STEP = 2  # the checkpoint of step N holds what ran up to it: conversation and understand; next retrieve
PGDOC = "install Debian's postgresql package (apt-get install postgresql) to run the Postgres checkpoint test"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, tiny_embedder_dir: Path) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("durable"), tiny_embedder_dir, KAPITSA_DOCS)


def _env(spec: str) -> dict[str, str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", CHECKPOINT_ENV_VAR: spec, "CRAGRAPH_GRADE__UPPER": "-1",
           "CRAGRAPH_GRADE__LOWER": "-1"}
    env.pop("TAVILY_API_KEY", None)
    return env


def _history(agent, thread: str) -> list:
    """The thread's root checkpoints, oldest first, as StateSnapshots."""
    return list(reversed(list(agent.get_state_history({"configurable": {"thread_id": thread}}))))


def _kill_mid_run(agent, spec: str, index: Path, thread: str) -> list:
    """Start `cragraph ask --thread`, SIGKILL it once a checkpoint after KILL_AFTER_STEP is stored; the history."""
    process = subprocess.Popen([CRAGRAPH, "ask", DIRECTOR, "--index", str(index), "--thread", thread, *SETTINGS],
                               env=_env(spec), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    try:
        while True:
            history = _history(agent, thread)
            if history and history[-1].metadata["step"] >= KILL_AFTER_STEP:
                assert process.poll() is None, "the run ended before it could be killed mid-run"
                process.kill()
                break
            if process.poll() is not None:
                pytest.fail(f"cragraph ask exited with {process.returncode} before its first checkpoints:\n"
                            f"{process.communicate()[1][-3000:]}")
            assert time.monotonic() < deadline, "no checkpoint after 240 s"
            time.sleep(0.02)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    assert process.returncode == -9
    return _history(agent, thread)


def _resume_after_kill(spec: str, index: Path) -> None:
    with open_checkpointer(spec) as saver:  # tables created here, before the CLI process opens the store too
        agent = build_graph().compile(checkpointer=saver)
        before = _kill_mid_run(agent, spec, index, THREAD)
        last = before[-1]
        assert last.next and "respond" not in last.next, f"killed after the end of the run: next={last.next}"
        assert "conversation" not in last.next

        # Resume: no question, no --index (the run recorded its options), only the thread.
        resumed = subprocess.run([CRAGRAPH, "ask", "--thread", THREAD, "--resume", "--json"], env=_env(spec),
                                 capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert f"resuming thread {THREAD!r} at {', '.join(last.next)}" in resumed.stderr
        output = json.loads(resumed.stdout)
        assert output["question"] == DIRECTOR
        assert output["answer"].strip() and not output["abstained"], output["answer"]

        after = _history(agent, THREAD)
        ids = [s.config["configurable"]["checkpoint_id"] for s in after]
        # The checkpoints written before the kill are the start of the same chain ...
        assert ids[: len(before)] == [s.config["configurable"]["checkpoint_id"] for s in before]
        new = after[len(before):]
        assert new, "the resume wrote no checkpoint"
        assert new[0].parent_config["configurable"]["checkpoint_id"] == ids[len(before) - 1]
        # ... continued step by step (no new input: the run was not started again) ...
        assert [s.metadata["step"] for s in after] == list(range(-1, len(after) - 1))
        assert [s.metadata["source"] for s in after].count("input") == 1
        # ... running only what was left: the steps done before the kill are not run again.
        ran_after_resume = {node for snapshot in [last, *new] for node in snapshot.next}
        assert {"retrieve", "answer", "respond"} <= ran_after_resume
        assert not {"conversation", "understand"} & ran_after_resume, [(s.metadata["step"], s.next) for s in after]
        assert after[-1].next == ()
        trace_nodes = [record["node"] for record in output["trace"]]
        assert trace_nodes.count("understand") == 1 and "conversation" not in trace_nodes, trace_nodes

        # The thread goes on: a follow-up resolves against the resumed run's answer; --resume has nothing left.
        followup = subprocess.run([CRAGRAPH, "ask", FOLLOW_UP, "--index", str(index), "--thread", THREAD,
                                   "--json", *SETTINGS], env=_env(spec), capture_output=True, text=True, timeout=300)
        assert followup.returncode == 0, followup.stderr[-3000:]
        opening = json.loads(followup.stdout)["trace"][0]
        assert opening["node"] == "conversation" and opening["decision"].startswith("follow-up"), opening
        assert f"-> 'Where was {output['answer'].split(' [')[0]} born?'" in opening["note"], opening["note"]
        again = subprocess.run([CRAGRAPH, "ask", "--thread", THREAD, "--resume"], env=_env(spec),
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 1 and "no unfinished run to resume" in again.stderr, again.stderr


def test_sqlite_run_killed_mid_run_resumes_from_its_last_checkpoint(tmp_path: Path, index: Path) -> None:
    _resume_after_kill(str(tmp_path / "threads.sqlite"), index)


def _postgres_bin() -> Path | None:
    """Debian's newest /usr/lib/postgresql/VERSION/bin, else the folder of pg_ctl on PATH (None: neither)."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")]
    if found:
        return max(found, key=lambda folder: int(folder.parent.name) if folder.parent.name.isdigit() else 0)
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl and shutil.which("initdb") else None


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL server listening only on a Unix socket in a temporary folder; yields its URL.
    As root the server runs as the `postgres` user (it refuses root), with a folder that user owns."""
    pytest.importorskip("psycopg", reason="the Postgres checkpoint test needs pip install 'cragraph[postgres]'")
    pytest.importorskip("langgraph.checkpoint.postgres",
                        reason="the Postgres checkpoint test needs pip install 'cragraph[postgres]'")
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip(f"no initdb / pg_ctl found: {PGDOC}")
    folder = Path(tempfile.mkdtemp(prefix="cragraph-pg-"))  # short: a socket path is limited to ~100 bytes
    run_as: dict = {}
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip(f"running as root and there is no `postgres` user to run the server as: {PGDOC}")
        os.chown(folder, account.pw_uid, account.pw_gid)
        run_as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
    data, log = folder / "data", folder / "server.log"
    subprocess.run([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                    "--no-sync"], check=True, capture_output=True, cwd=folder, **run_as)
    options = f"-c listen_addresses='' -c unix_socket_directories={folder} -c fsync=off -p 5432"
    started = subprocess.run([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w",
                              "-t", "60", "start"], capture_output=True, text=True, cwd=folder, **run_as)
    try:
        if started.returncode:
            text = log.read_text() if log.exists() else ""
            pytest.fail(f"pg_ctl start failed: {started.stderr}\n{text[-2000:]}")
        yield f"postgresql://postgres@/postgres?host={folder}&port=5432"
    finally:
        subprocess.run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, cwd=folder, **run_as)
        shutil.rmtree(folder, ignore_errors=True)


def test_postgres_run_killed_mid_run_resumes_from_its_last_checkpoint(index: Path) -> None:
    with postgres_server() as url:
        _resume_after_kill(url, index)


def test_a_wrong_postgres_url_is_a_clear_error_without_its_password(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("psycopg", reason="needs pip install 'cragraph[postgres]'")
    from cragraph.cli.main import main

    url = "postgresql://cragraph:s3cr3t-pw@127.0.0.1:1/threads"  # nothing listens on port 1
    monkeypatch.setenv(CHECKPOINT_ENV_VAR, url)
    assert main(["ask", "q", "--index", str(tmp_path), "--thread", "t"]) == 1
    err = capsys.readouterr().err
    assert "cannot connect to checkpoint store postgresql://cragraph:***@127.0.0.1:1/threads:" in err, err
    assert "refused" in err.lower() and "s3cr3t-pw" not in err
    monkeypatch.setenv(CHECKPOINT_ENV_VAR, "postgresql://cragraph:s3cr3t-pw@127.0.0.1:port/threads")
    assert main(["ask", "q", "--index", str(tmp_path), "--thread", "t"]) == 1
    err = capsys.readouterr().err
    assert "postgresql://cragraph:***@127.0.0.1:port/threads" in err and '"port"' in err, err
    assert "s3cr3t-pw" not in err


def test_store_and_resume_mistakes_are_clear_errors(tmp_path: Path, capsys, monkeypatch) -> None:
    from cragraph.cli.main import main

    assert mask_url("postgres://u:pw@h/db?sslmode=require&password=x") == "postgres://u:***@h/db?sslmode=require&password=***"
    with pytest.raises(CheckpointError, match="is a folder"), open_checkpointer(str(tmp_path)):
        pass
    (tmp_path / "not.sqlite").write_text("not a database " * 100)
    with pytest.raises(CheckpointError, match="not.sqlite.*file is not a database"), \
            open_checkpointer(str(tmp_path / "not.sqlite")):
        pass
    monkeypatch.setenv(CHECKPOINT_ENV_VAR, str(tmp_path / "threads.sqlite"))
    assert main(["ask", "--resume", "--index", str(tmp_path)]) == 1
    assert "--resume continues a thread's interrupted run: name it with --thread ID" in capsys.readouterr().err
    assert main(["ask", "q", "--thread", "t", "--resume"]) == 1
    assert "takes no question" in capsys.readouterr().err
    assert main(["ask", "--thread", "nobody", "--resume"]) == 1
    assert f"no thread 'nobody' in checkpoint store {tmp_path / 'threads.sqlite'}" in capsys.readouterr().err
