"""The embedded evaluator's training and held-out sets, written as normalized dataset folders.

Training uses only training data: nq_open_oracle_litm, cmrc2018_dev_zh, hipporag_legacy_train100 (hotpotqa and
musique: the multi-hop pairs that keep the head from demoting second-hop passages) and the train half of
xquad_ru_zh_en. XQuAD is split by passage: the number in the passage id (shared by the parallel en/ru/zh
passages) is hashed, so a passage and all its translations fall on the same side, and no test passage or
question is seen in training.

Each training set is cut to a prefix of its questions and the corpus up to their last gold passage (corpora
list passages in question order, so the cut keeps each kept question's distractors), so that indexing them
fits the one-hour CPU budget: e5-small embeds only 3-10 passages/s on this busy 2-core machine.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stores.chinese_script import traditional

XQUAD = "xquad_ru_zh_en"
XQUAD_LANGUAGES = ("en", "ru", "zh")
XQUAD_TEST_PERCENT = 50
_PASSAGE_NUMBER = re.compile(r"(\d+)$")


@dataclass(frozen=True)
class TrainingSet:
    """One source folder (relative to the data root) cut to `max_questions` questions and their corpus prefix."""

    source: str
    max_questions: int
    corpus_margin: int = 0  # passages kept after the last gold passage (the last question's distractors)


TRAINING_SETS = (
    TrainingSet("nq_open_oracle_litm", 500),
    TrainingSet("cmrc2018_dev_zh", 500),
    TrainingSet("hipporag_legacy_train100/hotpotqa", 50, corpus_margin=8),
    TrainingSet("hipporag_legacy_train100/musique", 40, corpus_margin=15),
)
XQUAD_TRAIN_MAX_QUESTIONS = 300  # per language


def xquad_part(passage_id: str) -> str:
    """'train' or 'test' for an XQuAD passage id; parallel passages (same number) get the same part."""
    match = _PASSAGE_NUMBER.search(passage_id)
    key = match.group(1).lstrip("0") or "0" if match else passage_id
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 100
    return "test" if bucket < XQUAD_TEST_PERCENT else "train"


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)


def write_dataset(folder: Path, questions: list[dict], corpus: list[dict], note: str) -> Path:
    """Write a normalized dataset folder; unchanged content is not rewritten (keeps the index cache valid)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("questions.jsonl", questions), ("corpus.jsonl", corpus)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        target = folder / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            write_jsonl(target, rows)
    (folder / "NOTE.md").write_text(note + "\n", encoding="utf-8")
    return folder


def prefix_subset(source: Path, spec: TrainingSet) -> tuple[list[dict], list[dict]]:
    """The first questions with gold in the corpus, and the corpus up to their last gold passage (+ margin)."""
    questions, corpus = read_jsonl(source / "questions.jsonl"), read_jsonl(source / "corpus.jsonl")
    position = {row["id"]: index for index, row in enumerate(corpus)}
    kept = [q for q in questions if q.get("supporting_ids") and all(s in position for s in q["supporting_ids"])]
    kept = kept[: spec.max_questions]
    if not kept:
        raise ValueError(f"{source}: no question has its gold passages in the corpus")
    last = max(position[s] for q in kept for s in q["supporting_ids"])
    return kept, corpus[: last + 1 + spec.corpus_margin]


def xquad_subset(language_dir: Path, part: str, max_questions: int | None = None) -> tuple[list[dict], list[dict]]:
    """One XQuAD language restricted to the passages of `part` and the questions about them."""
    corpus = [row for row in read_jsonl(language_dir / "corpus.jsonl") if xquad_part(row["id"]) == part]
    ids = {row["id"] for row in corpus}
    questions = [q for q in read_jsonl(language_dir / "questions.jsonl")
                 if q.get("supporting_ids") and all(s in ids for s in q["supporting_ids"])]
    return (questions[:max_questions] if max_questions else questions), corpus


def prepare_training_sets(data_root: Path, out_root: Path) -> list[Path]:
    """Write every training folder under out_root/train; returns their paths."""
    folders = []
    for spec in TRAINING_SETS:
        questions, corpus = prefix_subset(data_root / spec.source, spec)
        name = spec.source.replace("/", "__")
        note = (f"Training cut of {spec.source}: first {len(questions)} questions, corpus prefix of "
                f"{len(corpus)} passages (written by cragraph_lab.training_data).")
        folders.append(write_dataset(out_root / "train" / name, questions, corpus, note))
    for language in XQUAD_LANGUAGES:
        questions, corpus = xquad_subset(data_root / XQUAD / language, "train", XQUAD_TRAIN_MAX_QUESTIONS)
        note = (f"XQuAD {language} train part (passage-hash split, {XQUAD_TEST_PERCENT}% test): "
                f"{len(questions)} questions, {len(corpus)} passages.")
        folders.append(write_dataset(out_root / "train" / f"xquad_train__{language}", questions, corpus, note))
    return folders


def write_xquad_heldout(data_root: Path, out_root: Path) -> list[Path]:
    """Write the held-back XQuAD part (all its questions) as out_root/xquad_heldout/{en,ru,zh}, and the Chinese one
    again in traditional characters as xquad_heldout/zh_hant (all of it) and xquad_heldout/zh_hant_questions (the
    questions only, over the simplified passages)."""
    parent = out_root / "xquad_heldout"
    parent.mkdir(parents=True, exist_ok=True)
    (parent / "SOURCE.md").write_text(
        f"# xquad_heldout\n\nThe test part of {XQUAD} split by passage-id hash "
        f"(cragraph_lab.training_data.xquad_part, {XQUAD_TEST_PERCENT}% test). Never used in training.\n",
        encoding="utf-8")
    folders = []
    for language in XQUAD_LANGUAGES:
        questions, corpus = xquad_subset(data_root / XQUAD / language, "test")
        folders.append(write_dataset(parent / language, questions, corpus,
                                     f"XQuAD {language} held-out part: {len(questions)} questions."))
    questions, corpus = xquad_subset(data_root / XQUAD / "zh", "test")
    asked, written = in_traditional(questions, corpus)
    folders.append(write_dataset(parent / "zh_hant", asked, written,
                                 f"XQuAD zh held-out part in traditional characters (OpenCC s2t), questions, "
                                 f"answers and passages: {len(questions)} questions."))
    asked_only = [{**q, "question": a["question"]} for q, a in zip(questions, asked, strict=True)]
    folders.append(write_dataset(parent / "zh_hant_questions", asked_only, corpus,
                                 f"XQuAD zh held-out part, questions in traditional characters (OpenCC s2t) over "
                                 f"the passages as written (simplified): {len(questions)} questions."))
    return folders


def in_traditional(questions: list[dict], corpus: list[dict]) -> tuple[list[dict], list[dict]]:
    """Questions, gold answers, passages and titles in traditional characters: the held-out Chinese set as a
    user who writes traditional would ask it of documents written the same way."""
    asked = [{**q, "question": traditional(q["question"]), "answers": [traditional(a) for a in q["answers"]]}
             for q in questions]
    written = [{**d, "text": traditional(d["text"]), "title": traditional(d.get("title") or "")} for d in corpus]
    return asked, written


def default_data_root() -> Path:
    """../shared/data beside the repository (where the benchmark data lives in this project)."""
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def default_out_root() -> Path:
    """<user cache>/evaluator-data: where the training and held-out folders go by default."""
    from models.paths import cache_root

    return cache_root() / "evaluator-data"


def write_evaluator_data(data_root: Path | None = None, out_root: Path | None = None) -> list[Path]:
    """Write the training folders and the held-out XQuAD folders; returns every folder written, in order."""
    data_root = data_root or default_data_root()
    out_root = out_root or default_out_root()
    writers: list[Callable[[Path, Path], list[Path]]] = [prepare_training_sets, write_xquad_heldout]
    return [folder for writer in writers for folder in writer(data_root, out_root)]
