"""Crash safety of `cragraph index`, measured (issue 14).

Part 1: `rounds` times, start a real `cragraph index` process (a fresh build, an incremental add, a delete or a
rebuild, in turn), kill -9 it at a random moment of its run, then check that the index opens (checksums
verified), answers a search, and holds exactly the documents from before the command or exactly those after
it: never a mix, never an error. A fresh build killed before its swap leaves no index, which counts as "before".
Part 2: `pairs` times, start two writers at once on the same index (one adds, one deletes) and check that both
exit 0 and both changes are in the index (the second waits for the writer lock).

Run:  .venv/bin/python tests/reliability/kill_index.py --rounds 20 --pairs 5 [--seed N] [--json out.json]
Exit status 0 only when every round and pair held. Uses a tiny random BERT embedder built here (the real
loading, chunking, NER, BM25, FAISS and swap code; vectors carry no meaning), so a round takes seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from stores.bundle import BundleError, IndexBundle  # noqa: E402

CLI = [str(Path(sys.executable).parent / "cragraph"), "index", "--quiet"]  # the installed command
WORDS = (
    "river",
    "bridge",
    "city",
    "harbour",
    "institute",
    "physics",
    "chemistry",
    "capital",
    "scientist",
    "founded",
    "flows",
    "crosses",
    "old",
    "near",
    "the",
    "and",
    "through",
    "where",
    "were",
    "studied",
)


def build_tiny_embedder(folder: Path) -> Path:
    """A real sentence-transformers model (random 1-layer BERT, WordPiece over a fixed vocabulary) on disk."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as st_models
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(WORDS)])}
    tokenizer = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
    )
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=fast.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder / "hf")
    fast.save_pretrained(folder / "hf")
    word = st_models.Transformer(str(folder / "hf"), max_seq_length=128)
    pooling = st_models.Pooling(word.get_embedding_dimension(), "mean")
    SentenceTransformer(modules=[word, pooling, st_models.Normalize()]).save(str(folder / "st"))
    return folder / "st"


def write_corpus(folder: Path, prefix: str, count: int, rng: random.Random) -> set[str]:
    """`count` documents as JSONL records (ids prefix-0...) and plain files; returns their ids."""
    folder.mkdir(parents=True, exist_ok=True)
    ids, records = set(), []
    for i in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 120))) + f". Marker {prefix}{i}."
        if i % 2:
            records.append(json.dumps({"id": f"{prefix}-{i}", "title": f"{prefix} {i}", "text": text}))
            ids.add(f"{prefix}-{i}")
        else:
            (folder / f"{prefix}{i}.txt").write_text(text, encoding="utf-8")
            ids.add(f"{prefix}{i}.txt")
    (folder / f"{prefix}.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    return ids


def index_state(path: Path) -> frozenset[str] | None:
    """The document ids of the index (None: no index); raises on any error opening or searching it."""
    try:
        bundle = IndexBundle.open(path)
    except BundleError as error:
        if str(error).startswith("no index at"):
            return None
        raise
    try:
        ids = frozenset(bundle.docstore.document_ids())
        counts = bundle.manifest["counts"]
        if counts["documents"] != len(ids) or counts["chunks"] != len(bundle.docstore):
            raise AssertionError(f"manifest counts {counts} disagree with the docstore")
        from rag.retrieval.retriever import HybridRetriever

        HybridRetriever(bundle).search("river bridge", k=3)
        return ids
    finally:
        bundle.close()


def command(op: str, index: Path, embedder: Path, corpora: dict[str, Path], delete: list[str]) -> list[str]:
    base = [*CLI, "--index", str(index)]
    if op == "fresh build":
        return [*base, "--embedder", str(embedder), str(corpora["a"])]
    if op == "add":
        return [*base, str(corpora["b"])]
    if op == "delete":
        return [*base, "--delete", *delete]
    return [*base, "--rebuild", "--embedder", str(embedder), str(corpora["a"]), str(corpora["b"])]


def expected_after(
    op: str, before: frozenset[str] | None, ids: dict[str, set[str]], delete: list[str]
) -> frozenset[str]:
    if op == "fresh build":
        return frozenset(ids["a"])
    if op == "add":
        return frozenset((before or frozenset()) | ids["b"])
    if op == "delete":
        return frozenset((before or frozenset()) - set(delete))
    return frozenset(ids["a"] | ids["b"])


def run_clean(cmd: list[str], env: dict[str, str]) -> tuple[int, float, str]:
    started = time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    return done.returncode, time.monotonic() - started, done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="cragraph-kill-"))
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "CRAGRAPH_CACHE_DIR": str(work / "cache"),
    }
    os.environ["CRAGRAPH_CACHE_DIR"] = env["CRAGRAPH_CACHE_DIR"]
    embedder = build_tiny_embedder(work / "embedder")
    corpora = {name: work / f"corpus-{name}" for name in ("a", "b", "c")}
    ids = {name: write_corpus(folder, name, {"a": 40, "b": 20, "c": 10}[name], rng) for name, folder in corpora.items()}
    delete = sorted(ids["a"])[:8]
    index = work / "index"
    ops = ["fresh build", "add", "delete", "rebuild"]

    # How long each command takes uninterrupted, so kills land anywhere in its run.
    durations = {}
    for op in ops:
        if op == "fresh build":
            shutil.rmtree(index, ignore_errors=True)
        code, seconds, stderr = run_clean(command(op, index, embedder, corpora, delete), env)
        if code != 0:
            print(f"calibration of {op!r} failed:\n{stderr}", file=sys.stderr)
            return 2
        durations[op] = seconds
    print("uninterrupted: " + ", ".join(f"{op} {s:.1f} s" for op, s in durations.items()))

    rounds = []
    for number in range(1, args.rounds + 1):
        op = ops[(number - 1) % len(ops)]
        if op == "fresh build":
            for leftover in work.glob("*index*"):
                shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink()
        before = index_state(index)
        if before is None and op != "fresh build":  # a killed fresh build left none: start this round from one
            run_clean(command("fresh build", index, embedder, corpora, delete), env)
            before = index_state(index)
        after = expected_after(op, before, ids, delete)
        delay = rng.uniform(0.1, 1.0) * durations[op]
        process = subprocess.Popen(
            command(op, index, embedder, corpora, delete),
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        killed = process.poll() is None
        if killed:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
        leftovers = sorted(p.name for p in work.glob(".index.*") if p.name != ".index.lock")
        try:
            state = index_state(index)
            outcome = "old" if state == before else "new" if state == after else "MIXED"
            error = ""
        except Exception as failure:  # the property under test: this must never happen
            state, outcome, error = None, "ERROR", f"{type(failure).__name__}: {failure}"
        rounds.append(
            {
                "round": number,
                "op": op,
                "kill_after_s": round(delay, 2),
                "killed": killed,
                "outcome": outcome,
                "documents": None if state is None else len(state),
                "leftovers": leftovers,
                "error": error,
            }
        )
        print(
            f"round {number:2}: {op:11} kill -9 after {delay:5.2f} s{'' if killed else ' (had finished)'}: "
            f"{outcome}, {'no index' if state is None else f'{len(state)} documents'}"
            f"{', leftovers ' + ' '.join(leftovers) if leftovers else ''}{' ' + error if error else ''}"
        )

    # Leftovers of the killed writers are gone after the next uninterrupted write.
    code, _, _ = run_clean(command("add", index, embedder, corpora, delete), env)
    stale_after = sorted(p.name for p in work.glob(".index.*") if p.name != ".index.lock")

    pairs = []
    for number in range(1, args.pairs + 1):
        shutil.rmtree(index, ignore_errors=True)
        run_clean(command("fresh build", index, embedder, corpora, delete), env)
        target = frozenset((ids["a"] | ids["c"]) - set(delete))
        adder = subprocess.Popen(
            [*CLI, "--index", str(index), str(corpora["c"])],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(rng.uniform(0.0, 0.5))
        deleter = subprocess.Popen(
            [*CLI, "--index", str(index), "--delete", *delete],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        results = [(p.wait(), p.stderr.read() if p.stderr else "") for p in (adder, deleter)]
        state = index_state(index)
        waited = any("waiting for it to finish" in stderr for _, stderr in results)
        ok = all(code == 0 for code, _ in results) and state == target
        pairs.append(
            {
                "pair": number,
                "exit_codes": [code for code, _ in results],
                "both_changes_kept": ok,
                "second_waited_for_the_lock": waited,
            }
        )
        print(
            f"pair {number}: exit codes {[code for code, _ in results]}, both changes kept: {ok}, "
            f"one waited for the lock: {waited}"
        )

    intact = sum(r["outcome"] in ("old", "new") for r in rounds)
    killed = sum(r["killed"] for r in rounds)
    kept = sum(p["both_changes_kept"] for p in pairs)
    summary = {
        "rounds": len(rounds),
        "killed_mid_run": killed,
        "intact": intact,
        "old": sum(r["outcome"] == "old" for r in rounds),
        "new": sum(r["outcome"] == "new" for r in rounds),
        "leftovers_after_next_write": stale_after,
        "concurrent_pairs": len(pairs),
        "concurrent_pairs_both_kept": kept,
        "uninterrupted_seconds": durations,
        "seed": args.seed,
        "detail": {"rounds": rounds, "pairs": pairs},
    }
    print(
        f"\nkill -9: {intact}/{len(rounds)} intact ({killed} killed mid-run; {summary['old']} old, "
        f"{summary['new']} new, 0 mixed or errors expected); leftovers after the next write: "
        f"{stale_after or 'none'}\nconcurrent writers: {kept}/{len(pairs)} pairs kept both changes"
    )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if intact == len(rounds) and kept == len(pairs) and not stale_after else 1


if __name__ == "__main__":
    sys.exit(main())
