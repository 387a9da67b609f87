"""`python -m cragraph_lab bench reader-training`: fit the reader's top layers and span head on training data only.

Deterministic for a seed and thread count: examples are built in file order with seeded shuffles, features of
the frozen bottom layers are cached on disk (the same inputs give the same cache), batches are shuffled by a
seeded generator. Writes reader.npz + config.json (with validation EM / F1 per source, validation being a
hash-carved part of the training data) after every epoch, so a stopped run still leaves weights; then fits the
candidate re-ranker on the validation split (cragraph_lab.reader_reranker).

`average_readers` mixes two trained readers weight by weight (a "model soup", Wortsman et al. 2022): both start
from the same e5 layers and recipe, so their average is a reader too, between the two, and a retrain on new data
can move the shipped reader part of the way (docs/answering.md, issue 57's twelfth pass, measures such mixtures).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs
import torch
from tqdm import tqdm

from cragraph.evaluation.qa_metrics import exact_match, token_f1
from cragraph_lab.reader_examples import Example, training_examples
from rag.reader.decode import best_spans, clean_span
from rag.reader.encoder import Bottom, Layer, SpanHead, embedder_bert, load_head
from rag.reader.inputs import answer_char_spans, encode, token_positions
from rag.reader.window import build_context


def default_config() -> dict[str, Any]:
    """The shipped weights' configuration (see the model card beside them)."""
    return {
        "split": 6,
        "budget": 192,
        "max_len": 256,
        "max_answer_tokens": 30,
        "epochs": 3,
        "batch": 16,
        "lr": 3e-4,
        "head_lr": 3e-3,
        "warmup": 0.05,
        "seed": 0,
        "null_weight": 0.5,
        "cmrc_train_max": 1500,
        "cmrc_dev_max": 500,
        "n_passages": 4,
        "min_passages": 1,  # each example reads a number of passages drawn from min..n (seeded): CRAG hands one or two
        # decoding only (chosen on validation, see NOTES): lexical sentence prior, skip spans in the question
        "sentence_weight": 8.0,
        "skip_in_question": True,
        "hop_weight": 0.25,  # reading only: the window also reads the pages of entities the best sentences name
    }


def prepare(examples: list[Example], tokenizer, config: dict) -> list[dict]:
    """Context, token ids, offsets and gold token positions of each example."""
    count = lambda s: len(tokenizer.tokenize(s))  # noqa: E731
    rows = []
    for ex in examples:
        ctx = build_context(ex.question, ex.passages, ex.language, config["budget"], count)
        enc = encode(tokenizer, ex.question, ctx.text, config["max_len"])
        gold = token_positions(enc, answer_char_spans(ctx, ex.answers, ex.answer_starts))
        rows.append({"ex": ex, "ctx": ctx, "enc": enc, "gold": gold})
    return rows


def bottom_features(rows: list[dict], bottom: Bottom, cache: Path, batch: int = 16) -> list[np.ndarray]:
    """Frozen bottom-layer states of every row (fp16), cached on disk as one flat .npy plus lengths."""
    key = hashlib.sha256()
    for r in rows:
        key.update(r["enc"].input_ids.tobytes())
    key.update(f"{bottom.split}-int8".encode())
    stem = cache / f"bottom-{key.hexdigest()[:16]}"
    lengths = np.array([len(r["enc"].input_ids) for r in rows])
    if Path(f"{stem}.npy").exists():
        flat = np.load(f"{stem}.npy")
    else:
        out: list[np.ndarray] = [np.empty(0)] * len(rows)  # every row is filled below
        order = np.argsort(lengths, kind="stable")
        for b in tqdm(range(0, len(order), batch), desc="reader bottom features", unit="batch"):
            idx = order[b : b + batch]
            n = int(lengths[idx].max())
            ids = torch.ones((len(idx), n), dtype=torch.long)  # 1 = <pad> in XLM-R
            mask = torch.zeros((len(idx), n), dtype=torch.long)
            for k, i in enumerate(idx):
                ids[k, : lengths[i]] = torch.from_numpy(rows[i]["enc"].input_ids)
                mask[k, : lengths[i]] = 1
            h = bottom(ids, mask).numpy().astype(np.float16)
            for k, i in enumerate(idx):
                out[i] = h[k, : lengths[i]]
        flat = np.concatenate(out)
        cache.mkdir(parents=True, exist_ok=True)
        np.save(f"{stem}.npy", flat)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [flat[bounds[i] : bounds[i + 1]] for i in range(len(rows))]


def bucketed_batches(lengths: np.ndarray, size: int, rng: np.random.Generator, jitter: float) -> list[list[int]]:
    """Length-bucketed batches (less padding; lengths jittered so buckets differ between epochs), in a seeded
    random order."""
    order = np.argsort(lengths + rng.uniform(0, jitter, len(lengths)), kind="stable")
    batches = [order[i : i + size].tolist() for i in range(0, len(order), size)]
    rng.shuffle(batches)
    return batches


def step(loss: torch.Tensor, model: torch.nn.Module, optimizer: torch.optim.Optimizer, schedule: Any) -> None:
    """One optimizer step on `loss`, gradients clipped to norm 1, the learning-rate schedule advanced."""
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()


def batch_tensors(rows: list[dict], feats: list[np.ndarray], idx: list[int]):
    n = max(len(feats[i]) for i in idx)
    x = torch.zeros((len(idx), n, feats[idx[0]].shape[1]))
    mask = torch.zeros((len(idx), n), dtype=torch.long)
    valid = torch.zeros((len(idx), n), dtype=torch.bool)
    gold_s = torch.zeros((len(idx), n), dtype=torch.bool)
    gold_e = torch.zeros((len(idx), n), dtype=torch.bool)
    for k, i in enumerate(idx):
        m = len(feats[i])
        x[k, :m] = torch.from_numpy(feats[i].astype(np.float32))
        mask[k, :m] = 1
        enc = rows[i]["enc"]
        valid[k, 0] = True
        valid[k, enc.context_start : enc.context_end] = True
        if rows[i]["gold"]:
            for s, e in rows[i]["gold"]:
                gold_s[k, s] = True
                gold_e[k, e] = True
        else:
            gold_s[k, 0] = gold_e[k, 0] = True
    return x, mask, valid, gold_s, gold_e


def marginal_nll(logits: torch.Tensor, valid: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    logits = logits.masked_fill(~valid, -1e4)
    return torch.logsumexp(logits, -1) - torch.logsumexp(logits.masked_fill(~gold, -1e4), -1)


def predict(head: SpanHead, rows: list[dict], feats: list[np.ndarray], max_answer_tokens: int) -> list[str]:
    head.eval()
    preds = []
    with torch.inference_mode():
        for b in range(0, len(rows), 32):
            idx = list(range(b, min(b + 32, len(rows))))
            x, mask, *_ = batch_tensors(rows, feats, idx)
            start, end = head(x, mask)
            for k, i in enumerate(idx):
                enc = rows[i]["enc"]
                spans = best_spans(
                    start[k].numpy(), end[k].numpy(), enc.context_start, enc.context_end, max_answer_tokens
                )
                if not spans:
                    preds.append("")
                    continue
                s, e, _ = spans[0]
                text = rows[i]["ctx"].text
                cs, ce = clean_span(text, int(enc.offsets[s, 0]), int(enc.offsets[e, 1]))
                preds.append(text[cs:ce])
    return preds


def evaluate(rows: list[dict], preds: list[str]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for r, p in zip(rows, preds, strict=True):
        answers = r["ex"].answers
        scores = (exact_match(p, answers), token_f1(p, answers), float(bool(r["gold"])))
        groups[r["ex"].source].append(scores)
        groups["ALL"].append(scores)
    return {
        k: {
            "n": len(v),
            "EM": round(float(np.mean([s[0] for s in v])), 4),
            "F1": round(float(np.mean([s[1] for s in v])), 4),
            "in_context": round(float(np.mean([s[2] for s in v])), 4),
        }
        for k, v in sorted(groups.items())
    }


def save(head: SpanHead, config: dict, metrics: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    arrays = {k: v.detach().numpy().astype(np.float16) for k, v in head.state_dict().items()}
    np.savez(out / "reader.npz", **arrays)
    (out / "config.json").write_text(json.dumps({**config, "validation": metrics}, indent=1))


def train_reader(
    out: Path,
    threads: int = 2,
    overrides: dict[str, Any] | None = None,
    data_root: Path | None = None,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Train, write the weights to `out`, return the last epoch's validation metrics."""
    config = {**default_config(), **(overrides or {})}
    torch.set_num_threads(threads)
    torch.manual_seed(config["seed"])
    random.seed(config["seed"])
    from models.embedder import load_embedder

    embedder = load_embedder("e5-small")
    bert = embedder_bert(embedder.model)  # fp32 weights to initialise the trainable top layers
    quantized = embedder_bert(load_embedder("e5-small", quantize=True).model)
    tokenizer = embedder.model.tokenizer
    train, val = training_examples(
        config["seed"], config["n_passages"], config["cmrc_train_max"], config["cmrc_dev_max"], data_root,
        config.get("min_passages"),
    )
    train_rows, val_rows = prepare(train, tokenizer, config), prepare(val, tokenizer, config)
    print(
        f"examples: train {len(train_rows)}, validation {len(val_rows)}; answer in the read context for "
        f"{np.mean([bool(r['gold']) for r in train_rows]):.3f} of training examples",
        flush=True,
    )
    bottom = Bottom(quantized, config["split"])
    cache = cache or _feature_cache()
    train_feats = bottom_features(train_rows, bottom, cache)
    val_feats = bottom_features(val_rows, bottom, cache)

    eps = bert.config.layer_norm_eps
    layers = range(config["split"], bert.config.num_hidden_layers)
    head = SpanHead([Layer.from_bert(bert.encoder.layer[i], eps) for i in layers])
    torch.nn.init.normal_(head.pointer.weight, std=0.02)
    torch.nn.init.zeros_(head.pointer.bias)
    params = [
        {"params": [p for n, p in head.named_parameters() if not n.startswith("pointer")], "lr": config["lr"]},
        {"params": head.pointer.parameters(), "lr": config["head_lr"]},
    ]
    optimizer = torch.optim.AdamW(params, weight_decay=0.01)
    lengths = np.array([len(f) for f in train_feats])
    rng = np.random.default_rng(config["seed"])
    total = math.ceil(len(train_rows) / config["batch"]) * config["epochs"]
    warm = max(1, int(total * config["warmup"]))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warm, max(0.0, (total - step) / (total - warm)))
    )
    metrics: dict[str, Any] = {}
    for epoch in range(config["epochs"]):
        head.train()
        batches = bucketed_batches(lengths, config["batch"], rng, 40)
        bar = tqdm(batches, desc=f"reader epoch {epoch + 1}/{config['epochs']}", unit="batch")
        for idx in bar:
            x, mask, valid, gold_s, gold_e = batch_tensors(train_rows, train_feats, idx)
            start, end = head(x, mask)
            weight = torch.tensor([1.0 if train_rows[i]["gold"] else config["null_weight"] for i in idx])
            loss = ((marginal_nll(start, valid, gold_s) + marginal_nll(end, valid, gold_e)) * weight).mean()
            step(loss, head, optimizer, schedule)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        metrics = evaluate(val_rows, predict(head, val_rows, val_feats, config["max_answer_tokens"]))
        print(f"epoch {epoch + 1} validation {json.dumps(metrics['ALL'])}", flush=True)
        save(head, config, metrics, out)
    from cragraph_lab.reader_reranker import fit_reranker

    metrics["reranker"] = fit_reranker(out, data_root)
    print(f"re-ranker (cross-validated on the validation split) {json.dumps(metrics['reranker'])}", flush=True)
    return metrics


def _feature_cache() -> Path:
    return Path(platformdirs.user_cache_dir("cragraph")) / "reader-features"


def mixed_weights(base: Path, other: Path, weight: float) -> dict[str, np.ndarray]:
    """(1 - weight) * base + weight * other, array by array, in base's dtype; ValueError if they do not match."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight {weight}: the share of the other reader must be within 0 .. 1")
    with np.load(base) as a, np.load(other) as b:
        if set(a.files) != set(b.files) or any(a[k].shape != b[k].shape for k in a.files):
            raise ValueError(f"{base} and {other} hold readers of different shapes: they cannot be averaged")
        return {k: ((1 - weight) * a[k].astype(np.float32) + weight * b[k].astype(np.float32)).astype(a[k].dtype)
                for k in a.files}


def average_readers(
    base: Path, other: Path, weight: float, out: Path, threads: int = 2, data_root: Path | None = None
) -> dict[str, Any]:
    """Write (1 - weight) * base + weight * other (reader.npz) to `out` with `other`'s recipe, its validation
    metrics and a re-ranker fitted for the mixture; return the metrics."""
    arrays: dict[str, Any] = mixed_weights(base / "reader.npz", other / "reader.npz", weight)
    config = json.loads((other / "config.json").read_text())
    config = {k: v for k, v in config.items() if k not in ("validation", "reranker")}
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "reader.npz", **arrays)
    torch.set_num_threads(threads)
    from models.embedder import load_embedder

    embedder = load_embedder("e5-small")  # its tokenizer and layer config; the features come from the int8 bottom,
    quantized = embedder_bert(load_embedder("e5-small", quantize=True).model)  # as train_reader's validation does
    _, val = training_examples(
        config["seed"], config["n_passages"], config["cmrc_train_max"], config["cmrc_dev_max"], data_root,
        config.get("min_passages"),
    )
    val_rows = prepare(val, embedder.model.tokenizer, config)
    val_feats = bottom_features(val_rows, Bottom(quantized, config["split"]), _feature_cache())
    head = load_head(arrays, config["split"], quantized.config, out / "reader.npz")
    metrics = evaluate(val_rows, predict(head, val_rows, val_feats, config["max_answer_tokens"]))
    mixed = {**config, "averaged": {"base": str(base), "other": str(other), "weight": weight}}
    (out / "config.json").write_text(json.dumps({**mixed, "validation": metrics}, indent=1))
    from cragraph_lab.reader_reranker import fit_reranker

    metrics["reranker"] = fit_reranker(out, data_root)
    return metrics
