"""`python -m cragraph_lab bench verifier-training`: train the verifier (cragraph_lab.verifier) on training data only.

Examples. For each training question, its gold page is cut into the verifier's windows; the window holding a gold
answer is read with the question alone and with the gold answer marked in it (STATED), and with a false answer
marked: the reader's best spans in that window that are not a gold answer, other values of the same page
(CONTRADICTED). Hard negatives (ABSENT): another window of the same page (it speaks of the question's entity, not of
the asked fact) and the TF-IDF nearest page of the same corpus that does not hold the answer, each read plain and
with the reader's best span there marked (what the pipeline would propose from that window).

Sources (training splits only): nq_open_oracle_litm from question 460, cmrc2018_train_zh (a seeded sample), the
train half of xquad_ru_zh_en, and the project's user-style training folders data/userlike_train4 .. 6 (bridge
questions, whose first-hop page is the hard negative, and unanswerable ones). Left out: every question the answer
decision trains on (hipporag_legacy_train100, data/userlike_train .. 3 and 7, its XQuAD and NQ questions), so that
the decision sees the verifier's verdicts as they are on unseen questions; and never: hotpotqa_migres200, the XQuAD
test half, NQ questions 0-459, cmrc2018_dev_zh, data/userlike_claims7 .. 9, any traditional-Chinese set (the
verifier folds Chinese to simplified, as the reader does).
Validation: a tenth of the questions, by a hash of the question id.

Training: the verifier's own layers start from copies of the reader's last layers; states up to them (the
reader's int8 bottom and its first top layers, frozen) are computed once and cached; cross-entropy over the three
verdicts, AdamW, linear warm-up and decay, length-bucketed batches; one checkpoint per epoch, and a run resumes
from the last one.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from tqdm import tqdm

from cragraph_lab.reader_examples import NQ_FIRST_TRAIN, Distractors, in_validation
from cragraph_lab.reader_training import bucketed_batches, step
from cragraph_lab.training_data import default_data_root, read_jsonl, xquad_part
from cragraph_lab.verifier import (
    CONFIG_FILE,
    VERDICTS,
    WEIGHTS_FILE,
    Verifier,
    VerifierHead,
    marked,
    padded,
    windows,
)
from rag.reader.encoder import Layer, torch_spans
from rag.reader.types import Passage
from stores.chinese_script import simplified
from stores.tokenize import tokenize

STATED, CONTRADICTED, ABSENT = range(3)
PROJECT_DATA = Path(__file__).resolve().parents[1] / "data"
PAGE_FOLDERS = ("userlike_train4", "userlike_train5", "userlike_train6")  # none of them trains the decision


def default_config() -> dict[str, Any]:
    return {"shared_layers": 3, "own_layers": 3, "window_tokens": 128, "max_len": 192, "cmrc_train_max": 2500,
            "nq_max": 1500, "epochs": 2, "batch": 32, "lr": 1e-4, "head_lr": 1e-3, "warmup": 0.05, "seed": 0}


def _holds(text: str, answers: list[str]) -> bool:
    lowered = text.lower()
    return any(a.strip() and a.strip().lower() in lowered for a in answers)


def _overlap(window: str, question: str) -> int:
    return len(set(tokenize(window)) & set(tokenize(question)))


class Builder:
    """Collects (statement, window, label) examples; reads false answers with the reader."""

    def __init__(self, verifier: Verifier, seed: int) -> None:
        self.verifier = verifier
        self.reader = verifier.reader
        self.rng = random.Random(seed)
        self.rows: list[dict[str, Any]] = []

    def windows(self, passage: Passage, language: str) -> list[str]:
        return windows(passage, language, self.verifier.config["window_tokens"], self.reader.count_tokens)

    def add(self, said: str, window: str, label: int, source: str, key: str) -> None:
        self.rows.append({"said": said, "window": window, "label": label, "set": source,
                          "val": in_validation("verifier" + key, 10)})

    def spans(self, question: str, window: str, answers: list[str], language: str, top: int) -> list[str]:
        """The reader's best spans of the window that are no gold answer and no part of the question: what the
        pipeline would propose there if it were wrong."""
        scored = self.reader.score(simplified(question), [Passage(simplified(window))], language)
        asked = set(tokenize(question))
        found: list[str] = []
        for span in self.reader.spans(scored, top=8):
            text = " ".join(span.text.split())
            terms = set(tokenize(text))
            if not terms or terms <= asked or text in found or marked(window, text) is None:
                continue
            if any(a.lower() in text.lower() or text.lower() in a.lower() for a in answers if a.strip()):
                continue
            found.append(text)
            if len(found) == top:
                break
        return found

    def add_marked(self, question: str, window: str, answer: str, label: int, source: str, key: str) -> None:
        shown = marked(window, answer)
        if shown is not None:
            self.add(question, shown, label, source, key)

    def question(self, key: str, question: str, answers: list[str], language: str, gold: Passage,
                 negatives: list[Passage], source: str, first_hops: Sequence[Passage] = ()) -> None:
        """One answerable question's examples: the window stating the answer read plain and with the gold answer
        marked (STATED) and with the reader's two best wrong spans marked (CONTRADICTED); two windows that do not
        state it, another of the gold page and the nearest other page, and a bridge question's first-hop page
        (its bridge entity is what a wrong reading gives), read plain and with the reader's best span there
        marked (ABSENT)."""
        question = " ".join(question.split())
        parts = self.windows(gold, language)
        holding = [w for w in parts if _holds(w, answers)]
        if not holding:
            return
        positive = max(holding, key=lambda w: _overlap(w, question))
        gold_answer = next(a for a in answers if a.strip() and a.strip().lower() in positive.lower())
        self.add(question, positive, STATED, source, key)
        self.add_marked(question, positive, gold_answer, STATED, source, key)
        for wrong in self.spans(question, positive, answers, language, 2):
            self.add_marked(question, positive, wrong, CONTRADICTED, source, key)
        hard = [w for w in parts if not _holds(w, answers)] + self.nearest_windows(question, negatives, answers,
                                                                                   language)
        self.rng.shuffle(hard)
        self.absent(key, question, [*self.nearest_windows(question, list(first_hops), answers, language), *hard[:2]],
                    answers, language, source)

    def nearest_windows(self, question: str, pages: list[Passage], answers: list[str], language: str) -> list[str]:
        """Each page's window most like the question among those without an answer."""
        found = []
        for page in pages:
            own = [w for w in self.windows(page, language) if not _holds(w, answers)]
            if own:
                found.append(max(own, key=lambda w: _overlap(w, question)))
        return found

    def absent(self, key: str, question: str, chosen: list[str], answers: list[str], language: str,
               source: str) -> None:
        """Windows that do not state the answer, read plain and with the reader's best span there marked."""
        for window in chosen:
            self.add(question, window, ABSENT, source, key)
            for proposed in self.spans(question, window, answers, language, 1):
                self.add_marked(question, window, proposed, ABSENT, source, key)


def _corpus(folder: Path) -> dict[str, dict]:
    return {row["id"]: row for row in read_jsonl(folder / "corpus.jsonl")}


def _passage(row: dict) -> Passage:
    return Passage(row["text"], (row.get("title") or "").replace("_", " "))


def add_answerable(builder: Builder, key: str, question: str, answers: list[str], gold_ids: list[str],
                   corpus: dict[str, dict], near: Distractors, language: str, source: str) -> None:
    """One answerable question's examples: its first gold page holding an answer, the nearest other page without
    one, and its gold pages without an answer as first hops (a bridge question's)."""
    answers = [a for a in answers if a.strip()]
    holding = [g for g in gold_ids if _holds(corpus[g]["text"], answers)]
    if not holding or not answers:
        return
    distractors = [i for i in near.nearest(question, 3, set(gold_ids)) if not _holds(corpus[i]["text"], answers)][:1]
    builder.question(key, question, answers, language, _passage(corpus[holding[0]]),
                     [_passage(corpus[i]) for i in distractors], source,
                     [_passage(corpus[g]) for g in gold_ids if g not in holding])


def add_benchmark(builder: Builder, folder: Path, source: str, language: str, rows: list[dict]) -> None:
    corpus = _corpus(folder)
    near = Distractors(corpus)
    for row in tqdm(rows, desc=f"verifier examples {source}", unit="q"):
        add_answerable(builder, f"{source}:{row['id']}", row["question"], row.get("answers", []),
                       [g for g in row.get("supporting_ids", []) if g in corpus], corpus, near, language, source)


def add_pages(builder: Builder, folder: Path, source: str) -> None:
    """A folder of user-style pages (corpus/ + questions.jsonl): its bridge and single-hop questions as above
    (a bridge question's first-hop page among the negatives), and its unanswerable ones: the two pages most like
    the question, which speak of its entity but not of the asked fact, read as ABSENT."""
    from stores.loaders import load_documents

    corpus = {d.id: {"title": d.title, "text": d.text} for d in load_documents([folder / "corpus"]).documents}
    near = Distractors(corpus)
    for row in tqdm(read_jsonl(folder / "questions.jsonl"), desc=f"verifier examples {source}", unit="q"):
        key, language = f"{source}:{row['id']}", row["language"]
        if row["type"] == "unanswerable":
            pages = [_passage(corpus[i]) for i in near.nearest(row["question"], 2, set())]
            builder.absent(key, row["question"], builder.nearest_windows(row["question"], pages, [], language), [],
                           language, source)
        elif row["type"] in ("bridge", "single"):
            add_answerable(builder, key, row["question"], row["answers"],
                           [g for g in row["supporting_docs"] if g in corpus], corpus, near, language, source)


def build_examples(builder: Builder, config: dict[str, Any], data_root: Path) -> list[dict[str, Any]]:
    """Every source's examples; the questions the answer decision trains on are left out (its multi-hop and
    user-style sets whole, its XQuAD and NQ questions one by one), so that the verifier's verdict on them is
    what it would be on a user's question, not a verdict on its own training data."""
    from cragraph_lab.decision_training import decision_selection

    kept_out = {q["id"] for questions, _, _ in decision_selection(data_root).values() for q in questions}
    rng = random.Random(config["seed"])
    nq = [q for q in read_jsonl(data_root / "nq_open_oracle_litm" / "questions.jsonl")[NQ_FIRST_TRAIN:]
          if q["id"] not in kept_out]
    rng.shuffle(nq)
    add_benchmark(builder, data_root / "nq_open_oracle_litm", "nq", "en", nq[: config["nq_max"]])
    for language in ("en", "ru", "zh"):
        folder = data_root / "xquad_ru_zh_en" / language
        rows = [r for r in read_jsonl(folder / "questions.jsonl")
                if xquad_part(r["supporting_ids"][0]) == "train" and r["id"] not in kept_out]
        add_benchmark(builder, folder, f"xquad_{language}", language, rows)
    cmrc = read_jsonl(data_root / "cmrc2018_train_zh" / "questions.jsonl")
    rng.shuffle(cmrc)
    add_benchmark(builder, data_root / "cmrc2018_train_zh", "cmrc_train", "zh", cmrc[: config["cmrc_train_max"]])
    for name in PAGE_FOLDERS:
        add_pages(builder, PROJECT_DATA / name, name)
    return builder.rows


def cached_states(verifier: Verifier, rows: list[dict[str, Any]], cache: Path, batch: int = 32) -> list[np.ndarray]:
    """The states the verifier's own layers start from, for every row (fp16), cached on disk."""
    encoded = [verifier.encode(r["said"], r["window"]) for r in rows]
    key = hashlib.sha256()
    for tokens in encoded:
        key.update(tokens.tobytes())
    key.update(f"{verifier.config['shared_layers']}".encode())
    path = cache / f"verifier-states-{key.hexdigest()[:16]}.npy"
    lengths = np.array([len(e) for e in encoded])
    if path.exists():
        flat = np.load(path)
    else:
        out: list[np.ndarray] = [np.empty(0)] * len(rows)
        order = np.argsort(lengths, kind="stable")
        for at in tqdm(range(0, len(order), batch), desc="verifier states", unit="batch"):
            idx = order[at:at + batch]
            states = verifier.states(*padded([encoded[i] for i in idx])).numpy().astype(np.float16)
            for k, i in enumerate(idx):
                out[i] = states[k, : lengths[i]]
        flat = np.concatenate(out)
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, flat)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [flat[bounds[i]:bounds[i + 1]] for i in range(len(rows))]


def _batch(states: list[np.ndarray], idx: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    n = max(len(states[i]) for i in idx)
    x = torch.zeros((len(idx), n, states[idx[0]].shape[1]))
    mask = torch.zeros((len(idx), n), dtype=torch.long)
    for k, i in enumerate(idx):
        x[k, : len(states[i])] = torch.from_numpy(states[i].astype(np.float32))
        mask[k, : len(states[i])] = 1
    return x, mask


def predict(head: VerifierHead, states: list[np.ndarray], batch: int = 64) -> np.ndarray:
    head.eval()
    out = np.zeros((len(states), len(VERDICTS)), dtype=np.float32)
    order = np.argsort([len(s) for s in states], kind="stable")
    with torch.inference_mode():
        for at in range(0, len(order), batch):
            idx = order[at:at + batch].tolist()
            out[idx] = head(*_batch(states, idx)).softmax(-1).numpy()
    return out


def metrics(rows: list[dict[str, Any]], probabilities: np.ndarray) -> dict[str, Any]:
    """Accuracy per source and ROC-AUC of 'states the answer' (stated + contradicted) against absent."""
    from sklearn.metrics import roc_auc_score

    labels = np.array([r["label"] for r in rows])
    found: dict[str, Any] = {"n": len(rows), "accuracy": float((probabilities.argmax(1) == labels).mean())}
    says = labels != ABSENT
    if 0 < says.sum() < len(says):
        found["auc_says"] = float(roc_auc_score(says, probabilities[:, 0] + probabilities[:, 1]))
    claimed = labels != ABSENT
    if len(set(labels[claimed])) == 2:
        found["auc_stated_vs_contradicted"] = float(roc_auc_score(labels[claimed] == STATED,
                                                                  probabilities[claimed, 0]))
    return found


def save(head: VerifierHead, config: dict[str, Any], out: Path, extra: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    arrays = {k: v.detach().numpy().astype(np.float16) for k, v in head.state_dict().items()}
    np.savez(out / WEIGHTS_FILE, **arrays)
    (out / CONFIG_FILE).write_text(json.dumps({**config, **extra}, indent=1, ensure_ascii=False), encoding="utf-8")


def train_verifier(out: Path, threads: int = 2, overrides: dict[str, Any] | None = None,
                   data_root: Path | None = None, cache: Path | None = None) -> dict[str, Any]:
    """Build the examples, train, write verifier.npz + verifier.json to `out` after every epoch (a checkpoint
    `out/checkpoint.pt` lets an interrupted run resume at the next epoch); return the validation metrics."""
    import platformdirs

    from rag.reader.cache import load_reader

    config = {**default_config(), **(overrides or {})}
    torch.set_num_threads(threads)
    torch.manual_seed(config["seed"])
    reader = load_reader(backend="torch")
    shared = config["shared_layers"]
    layers = torch_spans(reader).head.layers[shared:shared + config["own_layers"]]
    own = [cast(Layer, copy.deepcopy(layer)) for layer in layers]
    head = VerifierHead(own)
    torch.nn.init.normal_(head.classifier.weight, std=0.02)
    torch.nn.init.zeros_(head.classifier.bias)
    verifier = Verifier(reader, head, config)
    cache = cache or Path(platformdirs.user_cache_dir("cragraph")) / "verifier"
    sizes = f"{config['seed']}-{config['cmrc_train_max']}-{config['nq_max']}"
    examples_file = cache / f"examples-marked-pages-{sizes}.jsonl"
    if examples_file.exists():
        rows = read_jsonl(examples_file)
    else:
        rows = build_examples(Builder(verifier, config["seed"]), config, data_root or default_data_root())
        cache.mkdir(parents=True, exist_ok=True)
        examples_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    train = [r for r in rows if not r["val"]]
    val = [r for r in rows if r["val"]]
    counts = {"train": dict(Counter(VERDICTS[r["label"]] for r in train)), "validation": len(val),
              "by_set": dict(Counter(r["set"] for r in rows))}
    print(f"examples: {json.dumps(counts)}", flush=True)
    train_states, val_states = cached_states(verifier, train, cache), cached_states(verifier, val, cache)
    params = [{"params": head.layers.parameters(), "lr": config["lr"]},
              {"params": head.classifier.parameters(), "lr": config["head_lr"]}]
    optimizer = torch.optim.AdamW(params, weight_decay=0.01)
    total = math.ceil(len(train) / config["batch"]) * config["epochs"]
    warm = max(1, int(total * config["warmup"]))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm))))
    checkpoint = out / "checkpoint.pt"
    first = 0
    if checkpoint.exists():
        saved = torch.load(checkpoint, weights_only=True)
        head.load_state_dict(saved["head"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        first = int(saved["epoch"])
        print(f"resuming after epoch {first}", flush=True)
    labels = torch.tensor([r["label"] for r in train])
    lengths = np.array([len(s) for s in train_states])
    found: dict[str, Any] = {}
    for epoch in range(first, config["epochs"]):
        rng = np.random.default_rng(config["seed"] + epoch)
        head.train()
        batches = bucketed_batches(lengths, config["batch"], rng, 24)
        bar = tqdm(batches, desc=f"verifier epoch {epoch + 1}/{config['epochs']}", unit="batch")
        for idx in bar:
            loss = torch.nn.functional.cross_entropy(head(*_batch(train_states, idx)), labels[idx])
            step(loss, head, optimizer, schedule)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        found = {"all": metrics(val, predict(head, val_states))}
        for name in sorted({r["set"] for r in val}):
            picked = [i for i, r in enumerate(val) if r["set"] == name]
            found[name] = metrics([val[i] for i in picked], predict(head, [val_states[i] for i in picked]))
        print(f"epoch {epoch + 1} validation {json.dumps(found['all'])}", flush=True)
        save(head, config, out, {"validation": found, "examples": counts, "epochs_done": epoch + 1})
        torch.save({"head": head.state_dict(), "optimizer": optimizer.state_dict(),
                    "schedule": schedule.state_dict(), "epoch": epoch + 1}, checkpoint)
    return found
