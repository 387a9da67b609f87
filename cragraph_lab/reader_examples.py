"""Reader training examples (question, passages, gold answers) from the project's normalized datasets.

Why: training and validation must see the kind of input the product gives the reader: a few passages, the
gold ones among lexically similar distractors, taken from their own corpus by TF-IDF over the project's
tokenizer (so Chinese gets character bigrams, Russian stems). Reported numbers come from `python -m
cragraph_lab eval qa`.

Splits (the brief's rules): train = NQ questions >= 460 in file order, cmrc2018 train + dev, hipporag_legacy
train100 hotpotqa + musique, XQuAD questions whose passage is in the 'train' half, and the span questions of the
repository's long-document training folders (data/longdocs_train*: reports and manuals where one file names many
people, units and dates, so a passage holds the asked role beside others). Validation is carved out of that by a
hash of the passage / question id, never from report data.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from cragraph_lab.training_data import default_data_root, xquad_part
from rag.reader.types import Passage

NQ_FIRST_TRAIN = 460  # NQ questions before this one are never trained on (the report questions are among them)


@dataclass
class Example:
    id: str
    question: str
    answers: list[str]
    language: str
    passages: list[Passage]
    gold: list[int] = field(default_factory=list)  # indexes of gold passages in `passages`
    answer_starts: dict[int, list[int]] = field(default_factory=dict)  # passage index -> known answer offsets
    source: str = ""
    qtype: str = ""


def _corpus(folder: Path) -> dict[str, dict]:
    with open(folder / "corpus.jsonl", encoding="utf-8") as handle:
        return {row["id"]: row for row in map(json.loads, handle) if row}


def _raw_questions(folder: Path) -> list[dict]:
    with open(folder / "questions.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def in_validation(key: str, percent: int = 12) -> bool:
    """A stable hash split: True for about `percent`% of keys."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 100 < percent


def _set_name(folder: str) -> str:
    """A data folder ("xquad_ru_zh_en/en") or a run folder named after it ("xquad_train__en") as one name."""
    return Path(folder).as_posix().replace("__", "/")


def validation_key(folder: str, question_id: str, gold_ids: list[str]) -> str:
    """What the split hashes for a question of `folder`: the passage number for XQuAD (parallel passages stay
    on one side), the passage id for CMRC, the folder and question id for a long-document folder (each numbers
    its questions alike), the question id otherwise."""
    name = _set_name(folder)
    if name.startswith("longdocs_train"):
        return f"{name}:{question_id}"
    if name.startswith("xquad"):
        return "xq" + gold_ids[0][-6:]
    if name.startswith("cmrc2018"):
        return gold_ids[0]
    return question_id


READER_TRAINING_SETS = ("nq_open_oracle_litm", "cmrc2018", "hipporag_legacy_train100", "xquad_ru_zh_en",
                        "xquad_train", "longdocs_train")
"""Name prefixes of the sets (and of their training cuts) the reader trains on."""


def unseen_by_reader(folder: str, question_id: str, gold_ids: list[str]) -> bool:
    """False for a question the reader may have trained on: one of its training sets, outside the validation
    split (conservative: NQ questions before NQ_FIRST_TRAIN and CMRC rows left out of the sample count as seen)."""
    name = _set_name(folder)
    if not name.startswith(READER_TRAINING_SETS):
        return True
    if name.startswith("longdocs_train"):  # its records name no gold passage; the split needs none
        return in_validation(validation_key(folder, question_id, gold_ids))
    if not gold_ids:
        return False
    if name.startswith("xquad_ru_zh_en") and xquad_part(gold_ids[0]) == "test":
        return True
    return in_validation(validation_key(folder, question_id, gold_ids))


class Distractors:
    """TF-IDF nearest passages of a corpus (project tokenizer as analyzer), for realistic training contexts."""

    def __init__(self, corpus: dict[str, dict]) -> None:
        try:
            from sklearn.feature_extraction.text import TfidfVectorizer
        except ImportError as error:
            raise RuntimeError("reader training needs scikit-learn: pip install -e '.[dev]'") from error

        from stores.tokenize import tokenize

        self.ids = list(corpus)
        self.vectorizer = TfidfVectorizer(analyzer=tokenize, sublinear_tf=True)
        self.matrix = self.vectorizer.fit_transform([corpus[i]["title"] + " " + corpus[i]["text"] for i in self.ids])

    def nearest(self, question: str, k: int, exclude: set[str]) -> list[str]:
        """The `k` passages most like the question, those in `exclude` left out (none when `k` <= 0)."""
        scores = (self.matrix @ self.vectorizer.transform([question]).T).toarray().ravel()
        ranked = (self.ids[i] for i in scores.argsort()[::-1] if self.ids[i] not in exclude)
        return list(islice(ranked, max(k, 0)))


def _make(
    row: dict,
    corpus: dict[str, dict],
    language: str,
    source: str,
    distractors: Distractors | None,
    n_passages: int,
    rng: random.Random,
    min_passages: int | None = None,
) -> Example:
    gold_ids = [g for g in row["supporting_ids"] if g in corpus]
    ids = list(gold_ids)
    if min_passages is not None and min_passages < n_passages:  # drawn only when asked: old runs stay as they were
        n_passages = rng.randint(min_passages, n_passages)
    if distractors is not None:
        ids += distractors.nearest(row["question"], max(n_passages - len(ids), 0), set(ids))
        rng.shuffle(ids)  # the gold passage is not always first, as after retrieval
    passages = [Passage(corpus[i]["text"], corpus[i]["title"].replace("_", " ")) for i in ids]
    gold = [ids.index(g) for g in gold_ids]
    starts: dict[int, list[int]] = {}
    if "answer_starts" in row and gold:
        starts[gold[0]] = list(row["answer_starts"])
    return Example(
        row["id"],
        row["question"],
        list(row["answers"]),
        language,
        passages,
        gold,
        starts,
        source,
        (row.get("meta") or {}).get("type", ""),
    )


LONG_DOCUMENT_TYPES = ("simple", "relation", "multihop", "temporal")
"""The long-document question types with one short answer (lists and unanswerable ones are not span questions)."""


def long_document_folders() -> list[Path]:
    """The repository's long-document training folders (data/longdocs_train*), in name order."""
    data = Path(__file__).resolve().parents[1] / "data"
    return sorted(p for p in data.glob("longdocs_train*") if (p / "questions.jsonl").exists())


def chunked_corpus(folder: Path) -> dict[str, dict]:
    """A long-document folder's corpus/ cut as the product's index cuts it (default index settings, the packaged
    embedder), as {chunk id: {"id", "title", "text"}}: the reader trains on the passages retrieval hands it."""
    from models.embedder import load_embedder
    from stores.bundle import IndexSettings
    from stores.ingest import embedded_chunks
    from stores.loaders import load_documents

    settings = IndexSettings()
    docs = load_documents([folder / "corpus"]).documents
    chunks, _ = embedded_chunks(docs, load_embedder(settings.embedder), settings, progress=False)
    return {c.id: {"id": c.id, "title": c.title, "text": c.text} for c in chunks}


def long_document_rows(corpus: dict[str, dict], questions: list[dict]) -> list[dict]:
    """The span questions as rows of the normalized format: the supporting passage is the chunk holding a gold
    answer that is most like the question (TF-IDF); a question no chunk answers word for word is left out."""
    distractors = Distractors(corpus)
    rows = []
    for q in questions:
        if q.get("type") not in LONG_DOCUMENT_TYPES or not q.get("answers"):
            continue
        holding = {i for i, c in corpus.items() if any(a in c["text"] for a in q["answers"])}
        if holding:
            best = distractors.nearest(q["question"], 1, set(corpus) - holding)
            rows.append({**q, "supporting_ids": best})
    return rows


def training_examples(
    seed: int = 0,
    n_passages: int = 4,
    cmrc_train_max: int = 3000,
    cmrc_dev_max: int = 1000,
    data_root: Path | None = None,
    min_passages: int | None = None,
) -> tuple[list[Example], list[Example]]:
    """(train, validation) examples from training data only; deterministic for a seed.

    With `min_passages` under `n_passages`, each example reads a number of passages drawn from that range (gold
    ones always among them): CRAG hands the reader one or two refined passages, plain retrieval five.
    """
    if min_passages is not None and not 1 <= min_passages <= n_passages:
        raise ValueError(f"min_passages must be 1..n_passages ({n_passages}), got {min_passages}")
    data = data_root or default_data_root()
    rng = random.Random(seed)
    train: list[Example] = []
    val: list[Example] = []

    def add_rows(folder: str, corpus: dict[str, dict], rows: list[dict], language: str | None = None) -> None:
        distractors = Distractors(corpus) if n_passages > 1 else None
        for row in rows:
            example = _make(row, corpus, language or row["language"], folder, distractors, n_passages, rng,
                            min_passages)
            key = validation_key(folder, row["id"], row["supporting_ids"])
            (val if in_validation(key) else train).append(example)

    def add(folder: str, language: str, rows: list[dict]) -> None:
        add_rows(folder, _corpus(data / folder), rows, language)

    add("nq_open_oracle_litm", "en", _raw_questions(data / "nq_open_oracle_litm")[NQ_FIRST_TRAIN:])
    for folder in ("hipporag_legacy_train100/hotpotqa", "hipporag_legacy_train100/musique"):
        add(folder, "en", _raw_questions(data / folder))
    for language in ("en", "ru", "zh"):
        folder = f"xquad_ru_zh_en/{language}"
        rows = [r for r in _raw_questions(data / folder) if xquad_part(r["supporting_ids"][0]) == "train"]
        add(folder, language, rows)
    for folder, cap in (("cmrc2018_train_zh", cmrc_train_max), ("cmrc2018_dev_zh", cmrc_dev_max)):
        rows = _raw_questions(data / folder)
        rng.shuffle(rows)
        add(folder, "zh", rows[:cap])
    for long_folder in long_document_folders():
        corpus = chunked_corpus(long_folder)
        add_rows(long_folder.name, corpus, long_document_rows(corpus, _raw_questions(long_folder)))
    return train, val
