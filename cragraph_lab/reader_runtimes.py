"""The reader on each runtime against the torch reader: `python -m cragraph_lab bench
reader-runtimes`.

Each case is a training question with its gold passages (and, for the multi-hop sets, three other passages of its
set): hipporag_legacy_train100 hotpotqa / musique (English) and the training half of XQuAD ru / zh. Every runtime
reads the same encoded inputs; reported per runtime: how often its answer is the torch reader's word for word,
exact match and F1 against the gold answers, the largest start / end logit difference per input (median), and its
seconds per read (encoder only, median of the per-input times). Every runtime runs the fp32 bottom (the reader
is trained on the int8 one's states, rag/reader/encoder.py), but not bit for bit (OpenVINO computes in bf16 where
the CPU has it), so the graph is measured by answers, not by logits.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from cragraph.evaluation.qa_metrics import exact_match, token_f1
from cragraph_lab.training_data import default_data_root, read_jsonl, xquad_part

RUNTIMES = ("openvino", "onnxruntime")


def cases(data_root: Path, per_set: int, seed: int = 0) -> list[tuple[str, list[Any], str, list[str]]]:
    """(question, passages, language, gold answers) of the training sets, `per_set` from each."""
    from rag.reader.types import Passage

    rng = random.Random(seed)
    found: list[tuple[str, list[Any], str, list[str]]] = []
    for part in ("hotpotqa", "musique"):
        folder = data_root / "hipporag_legacy_train100" / part
        corpus = read_jsonl(folder / "corpus.jsonl")
        by_id = {row["id"]: row for row in corpus}
        for question in read_jsonl(folder / "questions.jsonl")[:per_set]:
            rows = [by_id[i] for i in question["supporting_ids"] if i in by_id] + rng.sample(corpus, 3)
            rng.shuffle(rows)
            found.append((question["question"], [Passage(r["text"], r["title"]) for r in rows], "en",
                          question["answers"]))
    for language in ("ru", "zh"):
        folder = data_root / "xquad_ru_zh_en" / language
        by_id = {row["id"]: row for row in read_jsonl(folder / "corpus.jsonl")}
        training = [q for q in read_jsonl(folder / "questions.jsonl")
                    if all(xquad_part(i) == "train" for i in q["supporting_ids"])]
        for question in rng.sample(training, min(per_set, len(training))):
            found.append((question["question"], [Passage(by_id[i]["text"], by_id[i]["title"])
                                                 for i in question["supporting_ids"]], language,
                          question["answers"]))
    return found


def compare(per_set: int = 50, data_root: Path | None = None, report: Any = print) -> dict[str, Any]:
    """Read every case with the torch reader and with the exported graph on each runtime."""
    from rag.reader.cache import load_reader
    from rag.reader.graph import GraphSpans
    from rag.reader.reader import DEFAULT_WEIGHTS, Reader, read_weights

    config, arrays = read_weights(DEFAULT_WEIGHTS)
    torch_reader = load_reader(backend="torch")
    readers = {"torch": torch_reader}
    for runtime in RUNTIMES:
        readers[runtime] = Reader(GraphSpans.open(DEFAULT_WEIGHTS, config, arrays, runtime), torch_reader.tokenizer,
                                  config)
    rows = cases(data_root or default_data_root(), per_set)
    stats: dict[str, dict[str, list[float]]] = {name: {"same": [], "em": [], "f1": [], "logits": [], "s": []}
                                                for name in readers}
    for number, (question, passages, language, golds) in enumerate(rows, 1):
        reference = None
        for name, reader in readers.items():
            timed = _Timed(reader.spans_of)
            reader.spans_of = timed
            try:
                answer = reader.read(question, passages, language)
                scored = reader.score(question, passages, language)
            finally:
                reader.spans_of = timed.inner
            text = answer.text if answer is not None else ""
            if name == "torch":
                reference, torch_scores = text, scored
            stats[name]["same"].append(float(text == reference))
            stats[name]["em"].append(exact_match(text, golds))
            stats[name]["f1"].append(token_f1(text, golds))
            stats[name]["logits"].append(float(max(np.abs(scored.start - torch_scores.start).max(),
                                                   np.abs(scored.end - torch_scores.end).max())))
            stats[name]["s"].append(min(timed.seconds))
        if number % 20 == 0:
            report(f"{number}/{len(rows)} read")
    return {"cases": len(rows), "runtimes": {
        name: {"same_answer": sum(s["same"]), "em": statistics.mean(s["em"]), "f1": statistics.mean(s["f1"]),
               "logit_difference_median": statistics.median(s["logits"]),
               "seconds_per_read_median": statistics.median(s["s"])} for name, s in stats.items()}}


class _Timed:
    """The encoder call, timed (each read calls it once; the least of its calls is the read's encoder time)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds: list[float] = []

    def __call__(self, input_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = time.perf_counter()
        try:
            return self.inner(input_ids)
        finally:
            self.seconds.append(time.perf_counter() - start)


def markdown(result: dict[str, Any]) -> str:
    lines = ["| runtime | answer = torch's | EM | F1 | logit difference (median) | encoder s / read (median) |",
             "|---|---|---|---|---|---|"]
    for name, row in result["runtimes"].items():
        lines.append(f"| {name} | {row['same_answer']:.0f} / {result['cases']} | {row['em']:.3f} | {row['f1']:.3f} | "
                     f"{row['logit_difference_median']:.2f} | {row['seconds_per_read_median']:.3f} |")
    return "\n".join(lines)
