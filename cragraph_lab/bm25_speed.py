"""BM25 query speed at scale: BM25Index against rank-bm25's BM25Okapi over the same tokens.

Builds a corpus of ~300-500-character chunks from every corpus.jsonl under ../shared/data (passage =
title + ". " + text), reusing chunks under new ids when there are fewer than --chunks, indexes it with both,
times scoring of real questions from the same sets (each timing includes tokenizing the question) and checks
that both give the same top-10 scores. Prints a Markdown table and returns the result that
`python -m cragraph_lab bench bm25-speed --out` writes as JSON:

    python -m cragraph_lab bench bm25-speed --chunks 100000 --out bm25_speed.json
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import time
from pathlib import Path

import numpy as np

from cragraph_lab.extra import bench_import
from stores.bm25 import BM25Index
from stores.tokenize import clear_stem_cache, tokenize
from stores.types import titled

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CHUNK_MIN, CHUNK_MAX = 300, 500


def split_chunks(text: str) -> list[str]:
    """Greedy word-boundary windows of CHUNK_MIN..CHUNK_MAX characters (the last one may be shorter)."""
    chunks, current = [], ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > CHUNK_MAX:
            chunks.append(current)
            current = ""
        while len(word) > CHUNK_MAX:  # unspaced text (Chinese): cut by characters
            room = CHUNK_MAX - len(current) - (1 if current else 0)
            chunks.append(f"{current} {word[:room]}".strip())
            current, word = "", word[room:]
        current = f"{current} {word}" if current else word
        if len(current) >= CHUNK_MIN and current.endswith((".", "!", "?", "。", "！", "？")):
            chunks.append(current)
            current = ""
    if current.strip():
        chunks.append(current)
    return chunks


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def load_chunks_and_questions(data: Path) -> tuple[list[str], list[str], list[str]]:
    """All chunks of all corpora, all questions, and the set names they came from."""
    chunks: list[str] = []
    questions: list[str] = []
    sets = sorted(path.parent for path in data.rglob("corpus.jsonl"))
    for folder in sets:
        for row in _read_jsonl(folder / "corpus.jsonl"):
            chunks.extend(split_chunks(titled(row.get("title") or "", row["text"])))
        if (folder / "questions.jsonl").exists():
            questions.extend(q["question"] for q in _read_jsonl(folder / "questions.jsonl"))
    return chunks, questions, [str(folder.relative_to(data)) for folder in sets]


def _median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1000


def run(n_chunks: int, n_queries: int, n_okapi_queries: int, seed: int = 0, data: Path = DATA) -> dict:
    """Build both indexes over `n_chunks` chunks, time `n_queries` questions on ours and the first
    `n_okapi_queries` of them on rank-bm25; prints the progress and the table, returns the JSON result."""
    if not data.exists():
        raise FileNotFoundError(f"benchmark data not found at {data}")
    unique_chunks, all_questions, sets = load_chunks_and_questions(data)
    if not unique_chunks or not all_questions:
        raise ValueError(f"no corpus.jsonl chunks or questions.jsonl questions under {data}")
    rng = random.Random(seed)
    rng.shuffle(unique_chunks)  # every prefix mixes the corpora and languages
    chunks = [unique_chunks[i % len(unique_chunks)] for i in range(n_chunks)]
    questions = rng.sample(all_questions, n_queries)
    reused = n_chunks > len(unique_chunks)
    print(f"{len(unique_chunks)} distinct chunks from {len(sets)} corpora ({', '.join(sets)}); "
          + (f"reused under distinct ids to reach {n_chunks} ({n_chunks / len(unique_chunks):.1f}x each)."
             if reused else f"using {n_chunks} of them."))

    clear_stem_cache()
    start = time.perf_counter()
    tokens = [tokenize(chunk) for chunk in chunks]
    tokenize_s = time.perf_counter() - start
    print(f"tokenized {n_chunks} chunks in {tokenize_s:.1f} s (cold stem cache)")

    index = BM25Index()
    start = time.perf_counter()
    index.add(range(n_chunks), chunks)
    ours_build_s = time.perf_counter() - start

    start = time.perf_counter()
    okapi = bench_import("rank_bm25").BM25Okapi(tokens, k1=index.k1, b=index.b, epsilon=index.epsilon)
    okapi_build_s = time.perf_counter() - start
    print(f"built: ours {ours_build_s:.1f} s (tokenizing included), "
          f"rank-bm25 {okapi_build_s:.1f} s (from tokens)")

    ours_s, okapi_s, agree = [], [], 0
    for question in questions:
        start = time.perf_counter()
        index.search(question, k=10)
        ours_s.append(time.perf_counter() - start)
    for question in questions[:n_okapi_queries]:
        start = time.perf_counter()
        scores = okapi.get_scores(tokenize(question))
        top = np.argsort(-scores)[:10]
        okapi_s.append(time.perf_counter() - start)
        _, ours_scores = index.search(question, k=10)
        ref = scores[top]
        ref = ref[ref > 0]
        agree += len(ref) == len(ours_scores) and bool(np.allclose(ours_scores, ref, rtol=0, atol=1e-6))

    ours_ms, okapi_ms = _median_ms(ours_s), _median_ms(okapi_s)
    result = {
        "chunks": n_chunks,
        "distinct_chunks": len(unique_chunks),
        "chunks_reused": reused,
        "corpora": sets,
        "vocabulary": index.vocabulary_size,
        "tokenize_s": round(tokenize_s, 2),
        "build_s": {"ours_with_tokenize": round(ours_build_s, 2),
                    "rank_bm25_from_tokens": round(okapi_build_s, 2)},
        "query_median_ms": {"ours": round(ours_ms, 4), "rank_bm25": round(okapi_ms, 2)},
        "query_p90_ms_ours": round(float(np.percentile(ours_s, 90)) * 1000, 4),
        "queries": {"ours": len(ours_s), "rank_bm25": len(okapi_s)},
        "speedup": round(okapi_ms / ours_ms, 1),
        "same_top10_scores": f"{agree}/{len(okapi_s)}",
        "params": {"k1": index.k1, "b": index.b, "epsilon": index.epsilon, "k": 10},
        "machine": f"{platform.machine()} python {platform.python_version()}",
    }
    print()
    print(f"| BM25 at {n_chunks} chunks | median ms / query | queries |")
    print("|---|---|---|")
    print(f"| rank-bm25 BM25Okapi.get_scores + top-10 | {okapi_ms:.1f} | {len(okapi_s)} |")
    print(f"| BM25Index.search (k=10) | {ours_ms:.3f} | {len(ours_s)} |")
    print(f"| speed ratio | {result['speedup']}x | |")
    print(f"\nsame top-10 scores as rank-bm25: {result['same_top10_scores']}; "
          f"tokenize {tokenize_s:.1f} s, build ours {ours_build_s:.1f} s, rank-bm25 {okapi_build_s:.1f} s")
    return result


def write_result(result: dict, out: Path) -> None:
    """The result as indented JSON (parent folders created)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
