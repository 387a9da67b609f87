"""Questions from the reader's training sources that it never trained on, written as dataset folders.

Why: answer gates chosen on the reader's own training questions come out too lenient (on those it is right more
often at a given confidence), and the held-out sets are for reporting. These folders hold the questions of the
reader's validation split (reader_examples.validation_key), each with the corpus it is asked against:
NQ-open questions from NQ_FIRST_TRAIN on with the whole NQ corpus, and the XQuAD 'train'-half questions with that
half's passages. `python -m cragraph_lab eval qa --unanswerable 0.5` on them, gates at the floor, then `python -m
cragraph_lab bench abstention --reader-unseen` chooses gates on questions neither the reader nor the report has seen.
"""

from __future__ import annotations

from pathlib import Path

from cragraph_lab.reader_examples import NQ_FIRST_TRAIN, unseen_by_reader
from cragraph_lab.training_data import (
    XQUAD,
    XQUAD_LANGUAGES,
    default_data_root,
    default_out_root,
    read_jsonl,
    write_dataset,
    xquad_subset,
)

NQ = "nq_open_oracle_litm"


def write_reader_unseen(data_root: Path | None = None, out_root: Path | None = None) -> list[Path]:
    """Write out_root/reader_unseen/{nq_open_oracle_litm, xquad_en, xquad_ru, xquad_zh}; returns their paths."""
    data_root = data_root or default_data_root()
    parent = (out_root or default_out_root()) / "reader_unseen"
    questions = [q for q in read_jsonl(data_root / NQ / "questions.jsonl")[NQ_FIRST_TRAIN:]
                 if unseen_by_reader(NQ, q["id"], q.get("supporting_ids") or [])]
    folders = [write_dataset(parent / NQ, questions, read_jsonl(data_root / NQ / "corpus.jsonl"),
                             f"NQ-open questions {NQ_FIRST_TRAIN}+ in the reader's validation split: "
                             f"{len(questions)} questions, the whole corpus.")]
    for language in XQUAD_LANGUAGES:
        folder = f"{XQUAD}/{language}"
        half, corpus = xquad_subset(data_root / folder, "train")
        questions = [q for q in half if unseen_by_reader(folder, q["id"], q["supporting_ids"])]
        folders.append(write_dataset(parent / f"xquad_{language}", questions, corpus,
                                     f"XQuAD {language} 'train'-half questions in the reader's validation split: "
                                     f"{len(questions)} questions, the half's {len(corpus)} passages."))
    return folders
