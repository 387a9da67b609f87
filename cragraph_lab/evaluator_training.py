"""Train the embedded evaluator's head (`python -m cragraph_lab train-evaluator`).

Pipeline (fixed seed, progress bars, training data only; see cragraph_lab/training_data.py for the sets):
1. write the training folders (cuts of the training sets and the XQuAD train part);
2. index each folder through the product path (bench.retrieval.dataset_index: chunking, BM25, e5 vectors; the
   embeddings are cached by content hash, so a second run costs no model time);
3. hard negatives from the retriever: each question's hybrid top-10 (default RetrievalSettings), labelled gold
   or not; plus the same list with the gold passages dropped and refilled from ranks 11-14, all labelled not
   relevant, so the head learns that the best of a list without gold is still irrelevant (an absolute score,
   which the CRAG `incorrect` decision needs);
4. features per list (evaluators/features.py), cached per folder under <user cache>/evaluator-data/features;
5. MLP heads trained with torch (Adam, weighted log-loss, each set weighted by its share) from ENSEMBLE_SEEDS
   seeds, each keeping its epoch with the best ROC-AUC on 15% of questions held out by a hash of the question
   id; averaged into one MLP (MLPHead.average: one seed alone varied by up to .03 ROC-AUC per set) and saved
   as .npz with the training report in its metadata.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from evaluators.embedded import DEFAULT_WEIGHTS, RelevanceFeatures
from evaluators.features import FEATURE_NAMES, FEATURE_VERSION
from evaluators.head import MLPHead

SEED = 13
TOP_K = 10
MINED_K = 14  # top-10 plus the ranks that refill a list whose gold passages were removed
VALIDATION_PERCENT = 15
HIDDEN = (32, 16)
LEARNING_RATE = 1e-3
ENSEMBLE_SEEDS = 5  # heads trained from seeds SEED, SEED+1, ...; their logits are averaged (one merged MLP)
# Relative weight of each training folder (its pairs share that weight): multi-hop pairs count double so the
# head does not learn to demote second-hop passages (a head trained on single-hop sets alone did).
SET_WEIGHTS = {"hipporag_legacy_train100__hotpotqa": 2.0, "hipporag_legacy_train100__musique": 2.0}
CROSSLINGUAL_PAIRS = (("en", "ru"), ("en", "zh"), ("ru", "en"), ("zh", "en"))
"""(corpus language, question language) of the cross-lingual head's training folders."""
GOLD_REMOVED_WEIGHT = 0.5  # the gold-removed lists' total weight, relative to their set's full lists


@dataclass
class ListExamples:
    """Feature rows of many candidate lists; `group` numbers the question, `removed` marks gold-removed lists."""

    features: np.ndarray
    labels: np.ndarray
    group: np.ndarray
    removed: np.ndarray
    question_ids: list[str] = field(default_factory=list)

    @classmethod
    def concat(cls, parts: Sequence[ListExamples]) -> ListExamples:
        return cls(np.concatenate([p.features for p in parts]), np.concatenate([p.labels for p in parts]),
                   np.concatenate([p.group for p in parts]), np.concatenate([p.removed for p in parts]),
                   [q for p in parts for q in p.question_ids])


def roc_auc(labels: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> float:
    """ROC-AUC with ties counted half (Mann-Whitney), optionally weighted; NaN when one class is missing."""
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.ones(len(scores)) if weights is None else np.asarray(weights, dtype=np.float64)
    pos_w, neg_w = weights[labels].sum(), weights[~labels].sum()
    if pos_w == 0 or neg_w == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    s, lab, w = scores[order], labels[order], weights[order]
    total, neg_below = 0.0, 0.0
    start = 0
    while start < len(s):
        end = start
        while end < len(s) and s[end] == s[start]:
            end += 1
        block_neg = w[start:end][~lab[start:end]].sum()
        block_pos = w[start:end][lab[start:end]].sum()
        total += block_pos * (neg_below + 0.5 * block_neg)
        neg_below += block_neg
        start = end
    return float(total / (pos_w * neg_w))


def _folder_digest(folder: Path, max_questions: int | None) -> str:
    digest = hashlib.sha256(f"v{FEATURE_VERSION}|{TOP_K}|{MINED_K}|{max_questions}".encode())
    for name in ("questions.jsonl", "corpus.jsonl"):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


def mine_examples(folder: Path, extractor: RelevanceFeatures, cache_dir: Path, max_questions: int | None = None,
                  seed: int = SEED, progress: bool = True) -> ListExamples:
    """Hybrid top-10 (+ a gold-removed list) per question of one dataset folder, as feature rows; cached."""
    from cragraph_lab.datasets import load_dataset
    from cragraph_lab.retrieval import dataset_index
    from rag.retrieval.retriever import HybridRetriever

    cache_file = cache_dir / f"{folder.name}-{_folder_digest(folder, max_questions)}.npz"
    if cache_file.exists():
        with np.load(cache_file, allow_pickle=False) as data:
            return ListExamples(data["features"], data["labels"], data["group"], data["removed"],
                                [str(q) for q in data["question_ids"]])
    dataset = load_dataset(folder)
    questions = dataset.questions
    if max_questions and len(questions) > max_questions:
        rng = np.random.default_rng(seed)
        questions = [questions[i] for i in sorted(rng.choice(len(questions), max_questions, replace=False))]
    bundle = dataset_index(dataset, extractor.embedder_name, progress=progress)
    retriever = HybridRetriever(bundle)
    rows, labels, groups, removed, ids = [], [], [], [], []
    for number, question in enumerate(tqdm(questions, desc=f"mine {folder.name}", unit="q", disable=not progress)):
        hits = retriever.search(question.question, k=MINED_K)
        gold = set(question.supporting_ids)
        query_vector = extractor.embedder.embed_queries([question.question])[0]
        lists = [(hits[:TOP_K], False)]
        if any(h.chunk.doc_id in gold for h in hits[:TOP_K]):
            lists.append(([h for h in hits if h.chunk.doc_id not in gold][:TOP_K], True))
        for candidates, is_removed in lists:
            if not candidates:
                continue
            passages = [h.chunk.passage for h in candidates]
            rows.append(extractor.features(question.question, passages, query_vector))
            labels.append(np.array([h.chunk.doc_id in gold for h in candidates], dtype=np.int8))
            groups.append(np.full(len(candidates), number, dtype=np.int32))
            removed.append(np.full(len(candidates), is_removed, dtype=bool))
        ids.append(question.id)
    examples = ListExamples(np.concatenate(rows).astype(np.float32), np.concatenate(labels),
                            np.concatenate(groups), np.concatenate(removed), ids)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_file.with_suffix(".tmp.npz")
    np.savez(tmp, features=examples.features, labels=examples.labels, group=examples.group,
             removed=examples.removed, question_ids=np.array(ids))
    tmp.replace(cache_file)
    return examples


def example_weights(examples: ListExamples, set_weight: float) -> np.ndarray:
    """Each set's full lists share `set_weight`; its gold-removed lists share GOLD_REMOVED_WEIGHT of that."""
    weights = np.zeros(len(examples.labels))
    full, gone = ~examples.removed, examples.removed
    if full.any():
        weights[full] = set_weight / full.sum()
    if gone.any():
        weights[gone] = set_weight * GOLD_REMOVED_WEIGHT / gone.sum()
    return weights


def validation_mask(group_keys: Sequence[str]) -> np.ndarray:
    """Hold out ~VALIDATION_PERCENT% of questions, chosen by a hash of '<set>/<question id>'."""
    return np.array([int(hashlib.sha256(k.encode()).hexdigest()[:8], 16) % 100 < VALIDATION_PERCENT
                     for k in group_keys])


def train_head(features: np.ndarray, labels: np.ndarray, weights: np.ndarray, is_validation: np.ndarray,
               seed: int = SEED, epochs: int = 60, hidden: Sequence[int] = HIDDEN, lr: float = LEARNING_RATE,
               weight_decay: float = 1e-4, progress: bool = True) -> tuple[MLPHead, dict[str, float]]:
    """Fit the MLP on the training rows; keep the epoch with the best validation ROC-AUC."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    train = ~is_validation
    mean = features[train].mean(axis=0).astype(np.float64)
    std = np.maximum(features[train].std(axis=0), 1e-6).astype(np.float64)
    x = torch.tensor((features - mean) / std, dtype=torch.float32)
    y = torch.tensor(labels, dtype=torch.float32)
    w = torch.tensor(weights / weights[train].mean(), dtype=torch.float32)
    sizes = [features.shape[1], *hidden, 1]
    layers: list[torch.nn.Module] = []
    for index in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[index], sizes[index + 1]))
        if index < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    train_rows = np.flatnonzero(train)
    best: tuple[float, list[np.ndarray], int] = (-1.0, [], -1)
    bar = tqdm(range(epochs), desc="train head", unit="epoch", disable=not progress)
    for epoch in bar:
        model.train()
        for batch in np.array_split(rng.permutation(train_rows), max(1, len(train_rows) // 256)):
            picked = torch.tensor(batch)
            logits = model(x[picked]).squeeze(1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y[picked], weight=w[picked])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val_logits = model(x[is_validation]).squeeze(1).numpy()
        auc = roc_auc(labels[is_validation], val_logits, weights[is_validation])
        bar.set_postfix(val_auc=f"{auc:.4f}")
        if auc > best[0]:
            best = (auc, [p.detach().numpy().copy() for p in model.parameters()], epoch)
    params = best[1]
    head = MLPHead(FEATURE_NAMES, mean, std, [params[i].T.astype(np.float64) for i in range(0, len(params), 2)],
                   [params[i].astype(np.float64) for i in range(1, len(params), 2)])
    return head, {"validation_auc": best[0], "best_epoch": best[2], "epochs": epochs}


def run_training(data_root: Path, out: Path = DEFAULT_WEIGHTS, seed: int = SEED, epochs: int = 60,
                 work_dir: Path | None = None, progress: bool = True, crosslingual: bool = False) -> dict:
    """The whole pipeline; returns the training report (also stored in the weights' metadata). `crosslingual`:
    the cross-lingual head, from CROSSLINGUAL_PAIRS of the XQuAD training half instead of the training sets."""
    import torch

    from cragraph_lab.crosslingual import crosslingual_dataset
    from cragraph_lab.training_data import prepare_training_sets
    from models.paths import cache_root

    started = time.perf_counter()
    torch.manual_seed(seed)
    work = work_dir or cache_root() / "evaluator-data"
    folders = prepare_training_sets(data_root, work)
    if crosslingual:
        train = {folder.name: folder for folder in folders}
        folders = [crosslingual_dataset(train[f"xquad_train__{corpus}"], train[f"xquad_train__{questions}"],
                                        work / "crosslingual") for corpus, questions in CROSSLINGUAL_PAIRS]
    extractor = RelevanceFeatures()
    parts, weights, per_set = [], [], {}
    keys: list[str] = []
    for folder in folders:
        examples = mine_examples(folder, extractor, work / "features", seed=seed, progress=progress)
        parts.append(examples)
        keys.extend(f"{folder.name}/{examples.question_ids[g]}" for g in examples.group)
        weights.append(example_weights(examples, SET_WEIGHTS.get(folder.name, 1.0)))
        per_set[folder.name] = {"questions": len(examples.question_ids), "pairs": int(len(examples.labels)),
                                "positives": int(examples.labels.sum()),
                                "gold_removed_pairs": int(examples.removed.sum())}
    data = ListExamples.concat(parts)
    weight = np.concatenate(weights)
    is_validation = validation_mask(keys)
    heads, fits = [], []
    for offset in range(ENSEMBLE_SEEDS):
        head, fit = train_head(data.features, data.labels, weight, is_validation, seed=seed + offset,
                               epochs=epochs, progress=progress)
        heads.append(head)
        fits.append(fit)
    head = MLPHead.average(heads)
    val_full = is_validation & ~data.removed
    cosine_auc = roc_auc(data.labels[val_full], data.features[val_full, FEATURE_NAMES.index("cos")],
                         weight[val_full])
    head_auc = roc_auc(data.labels[val_full], head.logits(data.features[val_full]), weight[val_full])
    report = {
        "seed": seed, "feature_version": FEATURE_VERSION, "hidden": list(HIDDEN), "sets": per_set,
        "set_weights": SET_WEIGHTS, "gold_removed_weight": GOLD_REMOVED_WEIGHT, "learning_rate": LEARNING_RATE,
        "epochs": epochs, "ensemble": [{"seed": seed + i, "best_epoch": f["best_epoch"],
                                        "validation_auc": round(f["validation_auc"], 4)} for i, f in enumerate(fits)],
        "validation_full_lists_auc": {"head": round(head_auc, 4), "cosine": round(cosine_auc, 4)},
        "seconds": round(time.perf_counter() - started, 1),
    }
    head.meta = report
    head.save(out)
    return report
