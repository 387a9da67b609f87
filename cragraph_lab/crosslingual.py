"""`python -m cragraph_lab bench crosslingual`: retrieval with questions in one language over a
parallel corpus in another.

For parallel sets such as XQuAD (xqen-000042, xqru-000042 and xqzh-000042 are one passage in three languages),
the questions of one language folder are paired with the corpus of another: the derived dataset folder (under
<user cache>/crosslingual) holds the corpus language's corpus.jsonl and the question language's questions,
their supporting ids rewritten to the corpus's ids with the same number. The normal `python -m cragraph_lab eval
retrieval` then runs on it (cragraph_lab.retrieval), so the index, modes and metrics are the product path's own.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from cragraph_lab.datasets import dataset_name
from cragraph_lab.retrieval import ModeResult, run_retrieval_eval
from models.paths import cache_root

_NUMBER = re.compile(r"(\d+)$")


def _number(passage_id: str) -> str | None:
    match = _NUMBER.search(passage_id)
    return match.group(1) if match else None


def _language(folder: str | Path) -> str:
    """The language part of a set folder's name: `en` for xquad_ru_zh_en/en and for train/xquad_train__en."""
    return Path(folder).resolve().name.rsplit("__", 1)[-1]


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def crosslingual_dataset(corpus_dir: str | Path, questions_dir: str | Path, out_root: Path | None = None) -> Path:
    """Write (or rewrite) the folder pairing `questions_dir`'s questions with `corpus_dir`'s corpus; returns it.

    A question whose gold passage has no same-numbered passage in the corpus is an error: the sets are not
    parallel."""
    corpus_dir, questions_dir = Path(corpus_dir), Path(questions_dir)
    corpus_name = dataset_name(corpus_dir).replace("/", "__")
    question_language = _language(questions_dir)
    folder = (out_root or cache_root() / "crosslingual") / f"{corpus_name}__q-{question_language}"
    by_number = {}
    for row in _read_jsonl(corpus_dir / "corpus.jsonl"):
        number = _number(str(row["id"]))
        if number is not None:
            by_number[number] = str(row["id"])
    questions = []
    for row in _read_jsonl(questions_dir / "questions.jsonl"):
        gold = [by_number.get(_number(str(s)) or "") for s in row.get("supporting_ids", [])]
        if None in gold:
            raise ValueError(f"question {row['id']}: gold {row['supporting_ids']} has no same-numbered passage in "
                             f"{corpus_dir / 'corpus.jsonl'}; the question and corpus sets are not parallel")
        questions.append({**row, "supporting_ids": gold})
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(corpus_dir / "corpus.jsonl", folder / "corpus.jsonl")
    (folder / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    (folder / "NOTE.md").write_text(
        f"Questions of {questions_dir} over the corpus of {corpus_dir} (gold ids mapped by passage number).\n",
        encoding="utf-8")
    return folder


def run_crosslingual_eval(corpus_dir: str | Path, question_dirs: Sequence[str | Path], modes: Sequence[str],
                          embedder: str = "e5-small", limit: int | None = None, out: Path | None = None,
                          progress: bool = True) -> dict[str, list[ModeResult]]:
    """`python -m cragraph_lab eval retrieval` on each question set paired with the corpus; prints one summary table
    (R@1, R@5, MRR per direction and mode) and returns the results by direction."""
    results = {}
    for questions_dir in question_dirs:
        same = Path(questions_dir).resolve() == Path(corpus_dir).resolve()
        folder = Path(corpus_dir) if same else crosslingual_dataset(corpus_dir, questions_dir)
        direction = f"{_language(questions_dir)} -> {_language(corpus_dir)}"
        report = out.with_name(f"{out.stem}-{folder.name}{out.suffix}") if out is not None else None
        results[direction] = run_retrieval_eval(folder, modes, embedder=embedder, limit=limit, out=report,
                                                progress=progress)
    print("\n| questions -> corpus | mode | R@1 | R@5 | MRR |\n|---|---|---|---|---|")
    for direction, mode_results in results.items():
        for result in mode_results:
            metrics = result.metrics
            print(f"| {direction} | {result.mode} | {metrics['R@1']:.3f} | {metrics['R@5']:.3f} | "
                  f"{metrics['MRR']:.3f} |")
    return results
