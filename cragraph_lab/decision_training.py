"""`python -m cragraph_lab bench decision-training`: fit the answer decision (rag.answering.decision) from `python -m
cragraph_lab eval qa` runs on training questions, measure its calibration out of fold, and write its weights.

Make the runs with `--modes crag-multihop --unanswerable 0.5` on training sets only, so that half the questions are
asked of an index without their gold passages and "no right answer here" is learned. Every candidate the answer node
weighed (the record's `candidates`) is a row: its features, and whether it is right (`right`: it holds a gold answer, as
Truth counts, and is mostly that answer, so that the decision prefers the short span). A logistic regression on
standardized features ranks each question's candidates; a logistic map of the best one's log-odds turns it into its
probability of holding a gold answer (what Truth counts right). Which signals it reads is chosen by leaving one
training set out at a time (fit on the others, measure Truth at 0.5 and calibration on the one left out), so that
the choice holds across domains, not within the pooled folds. The chosen set is then measured out of fold (folds
grouped by question): expected calibration error and a reliability plot on every question with a candidate and on
those the reader never trained on, and Truth at answer_threshold 0.5 beside the answer gates this decision
replaced. The shipped weights are fitted on every row.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from cragraph.evaluation.qa_metrics import contains_answer, holds_answer, token_f1
from cragraph_lab.extra import bench_import
from cragraph_lab.reader_examples import unseen_by_reader
from rag.answering.decision import DEFAULT_WEIGHTS, DecisionModel
from rag.answering.features import MODEL_FEATURES, model_vector

FOLDS = 5
BINS = 10
MIN_F1 = 0.5
C = 1.0  # inverse regularization strength of the logistic regression (scikit-learn's default)
# The gates the decision replaced, at their last defaults: answer_min_margin, answer_min_grade, answer_min_score.
OLD_GATES = {"margin": 7.5, "grade": -0.5, "evidence": -0.2}


@dataclass
class Question:
    """One record of a run: its candidates' features and labels."""

    key: str
    set: str
    unseen: bool
    unanswerable: bool
    features: np.ndarray  # [candidates, MODEL_FEATURES]
    labels: np.ndarray  # [candidates] 1 right (`right`: a short answer), 0 wrong: what ranks the candidates
    holds: np.ndarray  # [candidates] 1 when it holds a gold answer (Contains): what Truth counts, and calibrates
    readings: list[str]


def read_questions(paths: Iterable[Path], mode: str = "crag-multihop") -> list[Question]:
    """The records of `mode` in results.jsonl files (each tagged with its run folder's name)."""
    questions = []
    for path in paths:
        name = path.parent.name
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                record = json.loads(line)
                if record.get("mode") != mode:
                    continue
                candidates = record.get("candidates") or []
                features = np.array([model_vector(c["features"]) for c in candidates],
                                    dtype=np.float64).reshape(len(candidates), len(MODEL_FEATURES))
                items = record.get("items")  # a list question: right when it names three quarters of them
                labels = np.array([holds_answer(c["answer"], [], items) if items
                                   else right(c["answer"], record["answers"]) for c in candidates], dtype=np.float64)
                holds = np.array([holds_answer(c["answer"], record["answers"], items) for c in candidates],
                                 dtype=np.float64)
                questions.append(Question(f"{name}:{record['id']}", name,
                                          unseen_by_reader(name, record["id"], list(record.get("gold_ids") or [])),
                                          bool(record.get("unanswerable")), features, labels, holds,
                                          [c["reading"] for c in candidates]))
    return questions


def right(answer: str, golds: Sequence[str]) -> bool:
    """A short answer a reader of it would take as the gold one: it holds a gold answer (as Truth counts) and is
    mostly that answer (token F1 at least MIN_F1), so a sentence that merely contains it is not a right span."""
    return bool(golds) and contains_answer(answer, golds) > 0 and token_f1(answer, golds) >= MIN_F1


def fit(features: np.ndarray, labels: np.ndarray) -> DecisionModel:
    """Logistic regression on standardized features (uncalibrated: calibration (1, 0))."""
    from sklearn.linear_model import LogisticRegression

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=C, max_iter=5000)
    model.fit((features - mean) / scale, labels)
    return DecisionModel(MODEL_FEATURES, tuple(map(float, mean)), tuple(map(float, scale)),
                         tuple(float(c) for c in model.coef_[0]), float(model.intercept_[0]))


def scores(model: DecisionModel, features: np.ndarray) -> np.ndarray:
    """z, the uncalibrated log-odds, of each row."""
    return model.intercept + ((features - np.array(model.mean)) / np.array(model.scale)) @ np.array(model.coef)


def platt(z: np.ndarray, right: np.ndarray) -> tuple[float, float]:
    """(a, b) of the logistic map p = sigmoid(a * z + b) from the chosen candidates' z to whether they were right:
    two parameters, smooth and monotone, where an isotonic step map follows the pooled training sets' quirks."""
    from sklearn.linear_model import LogisticRegression

    if len(set(right.tolist())) < 2:
        return 1.0, 0.0
    fitted = LogisticRegression(C=100.0, max_iter=1000).fit(z.reshape(-1, 1), right)
    return float(fitted.coef_[0][0]), float(fitted.intercept_[0])


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))


def folds_of(questions: Sequence[Question], folds: int = FOLDS) -> list[int]:
    """A question's fold: a hash of its key, stable across runs."""
    return [int(hashlib.sha256(q.key.encode()).hexdigest()[:8], 16) % folds for q in questions]


def out_of_fold(questions: Sequence[Question], folds: int = FOLDS) -> list[np.ndarray]:
    """Each question's candidates' z from a model fitted without that question's fold."""
    fold_of = folds_of(questions, folds)
    out: list[np.ndarray] = [np.zeros(0)] * len(questions)
    for fold in range(folds):
        train = [q for q, f in zip(questions, fold_of, strict=True) if f != fold and len(q.labels)]
        model = fit(np.vstack([q.features for q in train]), np.concatenate([q.labels for q in train]))
        for i, (q, f) in enumerate(zip(questions, fold_of, strict=True)):
            if f == fold and len(q.labels):
                out[i] = scores(model, q.features)
    return out


def calibrated_out_of_fold(questions: Sequence[Question], z: Sequence[np.ndarray],
                           folds: int = FOLDS) -> list[tuple[float, float]]:
    """(probability, right) of each question's chosen candidate, its z mapped by a logistic fit without its fold."""
    picked = chosen(questions, z)
    fold_of = folds_of(questions, folds)
    has = [len(q.labels) > 0 for q in questions]
    maps = {}
    for fold in range(folds):
        others = [j for j in range(len(picked)) if has[j] and fold_of[j] != fold]
        maps[fold] = platt(np.array([picked[j][0] for j in others]), np.array([picked[j][1] for j in others]))
    out: list[tuple[float, float]] = []
    for i, (value, right) in enumerate(picked):
        if not has[i]:
            out.append((0.0, 0.0))
            continue
        a, b = maps[fold_of[i]]
        out.append((float(sigmoid(np.array(a * value + b))), right))
    return out


def masked(questions: Sequence[Question], drop: Sequence[str]) -> list[Question]:
    """The questions with every model feature built on a dropped signal set to 0 (a variant without them)."""
    columns = [i for i, name in enumerate(MODEL_FEATURES) if any(part in drop for part in name.split("*"))]
    out = []
    for q in questions:
        features = q.features.copy()
        features[:, columns] = 0.0
        out.append(replace(q, features=features))
    return out


def leave_one_set_out(questions: Sequence[Question]) -> dict[str, dict[str, Any]]:
    """For each training set: the ranking and its calibration fitted on every other set (the calibration on their
    out-of-fold z), then Truth at 0.5 and ECE of the chosen candidates of the set left out."""
    found = {}
    for name in sorted({q.set for q in questions}):
        rest = [q for q in questions if q.set != name]
        held = [q for q in questions if q.set == name]
        rows = [q for q in rest if len(q.labels)]
        model = fit(np.vstack([q.features for q in rows]), np.concatenate([q.labels for q in rows]))
        a, b = platt(*map(np.array, zip(*[p for p, q in zip(chosen(rest, out_of_fold(rest)), rest, strict=True)
                                            if len(q.labels)], strict=True)))
        picked = [(float(sigmoid(np.array(a * v + b))), r) if len(q.labels) else (0.0, 0.0)
                  for (v, r), q in zip(chosen(held, [scores(model, q.features) if len(q.labels) else np.zeros(0)
                                                     for q in held]), held, strict=True)]
        weighed = [x for x, q in zip(picked, held, strict=True) if len(q.labels)]
        found[name] = {"questions": len(held), "truth": round(truth(picked), 4),
                       "ece": calibration(weighed)["ece"], "answered": sum(p >= 0.5 for p, _ in picked),
                       "right": sum(p >= 0.5 and r > 0 for p, r in picked)}
    return found


VARIANTS = {"every signal": (), "without language flags": ("ru", "zh")}
"""The signal sets leave_one_set_out compares; the one with the best mean Truth over the sets left out ships."""


def chosen(questions: Sequence[Question], values: Sequence[np.ndarray]) -> list[tuple[float, float]]:
    """(value, holds a gold answer) of each question's best-valued candidate; (0, 0) for a question with none."""
    picked = []
    for q, v in zip(questions, values, strict=True):
        if len(v) == 0:
            picked.append((0.0, 0.0))
            continue
        best = int(np.argmax(v))
        picked.append((float(v[best]), float(q.holds[best])))
    return picked


def calibration(picked: Sequence[tuple[float, float]], bins: int = BINS) -> dict[str, Any]:
    """Expected calibration error over equal-width bins, and each bin's count, mean probability and accuracy."""
    p = np.array([x for x, _ in picked])
    y = np.array([r for _, r in picked])
    rows, ece = [], 0.0
    for b in range(bins):
        inside = (p >= b / bins) & ((p < (b + 1) / bins) if b < bins - 1 else (p <= 1.0))
        if inside.any():
            gap = abs(float(p[inside].mean()) - float(y[inside].mean()))
            ece += inside.sum() / len(p) * gap
            rows.append({"bin": b, "n": int(inside.sum()), "probability": round(float(p[inside].mean()), 4),
                         "right": round(float(y[inside].mean()), 4)})
    return {"ece": round(ece, 4), "n": len(p), "bins": rows}


def truth(picked: Sequence[tuple[float, float]], threshold: float = 0.5) -> float:
    """Truth (right +1, abstain 0, wrong -1) answering each question whose chosen probability reaches threshold."""
    scores = [(1.0 if right else -1.0) if p >= threshold else 0.0 for p, right in picked]
    return float(np.mean(scores)) if scores else 0.0


def old_gates(question: Question) -> tuple[float, float]:
    """What the replaced gates did: the one-pass reading's best (or the rule's) answered when its margin, its
    passage's grade and the best evidence passed answer_min_margin / answer_min_grade / answer_min_score."""
    first = [i for i, r in enumerate(question.readings) if r in ("one_pass", "yes_no", "options", "compared")]
    if not first:
        return 0.0, 0.0
    f = dict(zip(MODEL_FEATURES, question.features[first[0]], strict=True))
    passes = ((question.readings[first[0]] != "one_pass" or f["margin"] * 10 >= OLD_GATES["margin"])
              and (not f["graded"] or f["grade"] >= OLD_GATES["grade"])
              and f["best_evidence"] >= OLD_GATES["evidence"])
    return (1.0 if passes else 0.0), float(question.holds[first[0]])


def paired_truth(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]], seed: int = 0,
                 rounds: int = 2000) -> tuple[float, float, float]:
    """Truth(a) - Truth(b) over the same questions, with a 95% paired bootstrap interval."""
    sa = np.array([(1.0 if r else -1.0) if p >= 0.5 else 0.0 for p, r in a])
    sb = np.array([(1.0 if r else -1.0) if p >= 0.5 else 0.0 for p, r in b])
    diff = sa - sb
    rng = np.random.default_rng(seed)
    means = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(rounds)]
    return float(diff.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def reliability_plot(parts: dict[str, dict[str, Any]], out: Path) -> None:
    bench_import("matplotlib").use("Agg")
    plt = bench_import("matplotlib.pyplot")

    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
    for label, part in parts.items():
        xs = [b["probability"] for b in part["bins"]]
        ys = [b["right"] for b in part["bins"]]
        ax.plot(xs, ys, marker="o", label=f"{label} (n={part['n']}, ECE {part['ece']:.3f})")
    ax.set_xlabel("probability of the chosen answer (out of fold)")
    ax.set_ylabel("share right")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def train_decision(results: Sequence[Path], out: Path = DEFAULT_WEIGHTS, plot: Path | None = None,
                   mode: str = "crag-multihop") -> dict[str, Any]:
    """Choose the signal set by leaving one training set out, measure it out of fold, fit it on everything, and
    write the weights (with the measurements) to `out`."""
    every = read_questions(results, mode)
    if not any(len(q.labels) for q in every):
        raise ValueError(f"no candidates of mode {mode!r} in {', '.join(map(str, results))}: run `python -m "
                         "cragraph_lab eval qa` "
                         "with this version first")
    several = len({q.set for q in every}) > 1  # one set leaves nothing to fit on when it is left out
    lodo = {variant: leave_one_set_out(masked(every, drop)) for variant, drop in VARIANTS.items()} if several else {}
    best = max(lodo, key=lambda v: float(np.mean([part["truth"] for part in lodo[v].values()]))) if lodo \
        else next(iter(VARIANTS))
    questions = masked(every, VARIANTS[best])
    z = out_of_fold(questions)
    picked = calibrated_out_of_fold(questions, z)
    # calibration is of the probabilities the answer node reports: a question with no candidate has none
    weighed = [(x, q) for x, q in zip(picked, questions, strict=True) if len(q.labels)]
    unseen = [x for x, q in weighed if q.unseen]
    gates = [old_gates(q) for q in questions]
    per_set: dict[str, dict[str, Any]] = defaultdict(dict)
    for name in sorted({q.set for q in questions}):
        idx = [i for i, q in enumerate(questions) if q.set == name]
        diff = paired_truth([picked[i] for i in idx], [gates[i] for i in idx])
        per_set[name] = {"questions": len(idx), "truth": round(truth([picked[i] for i in idx]), 4),
                         "truth_old_gates": round(truth([gates[i] for i in idx]), 4),
                         "difference": [round(v, 4) for v in diff]}
    report: dict[str, Any] = {
        "questions": len(questions),
        "rows": int(sum(len(q.labels) for q in questions)),
        "sets": sorted({q.set for q in questions}),
        "variant": best,
        "leave_one_set_out": lodo,
        "calibration_all": calibration([x for x, _ in weighed]),
        "calibration_reader_unseen": calibration(unseen),
        "truth": round(truth(picked), 4),
        "truth_old_gates": round(truth(gates), 4),
        "difference": [round(v, 4) for v in paired_truth(picked, gates)],
        "per_set": dict(per_set),
    }
    rows = [q for q in questions if len(q.labels)]
    model = fit(np.vstack([q.features for q in rows]), np.concatenate([q.labels for q in rows]))
    own = [x for x, q in zip(chosen(questions, z), questions, strict=True) if len(q.labels)]
    model = replace(model, calibration=platt(np.array([v for v, _ in own]), np.array([r for _, r in own])))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**model.as_dict(), "trained": report}, indent=1), encoding="utf-8")
    (out.parent / "MODEL_CARD.md").write_text(model_card(report, results, model), encoding="utf-8")
    if plot is not None:
        reliability_plot({"reader-unseen": report["calibration_reader_unseen"], "all": report["calibration_all"]},
                         plot)
    return report


def lodo_table(report: dict[str, Any]) -> str:
    """The leave-one-set-out table: Truth at 0.5 and ECE of each set left out, per signal set."""
    variants = list(report["leave_one_set_out"])
    if not variants:
        return "(one training set: nothing to leave out)"
    head = "| set left out | questions | " + " | ".join(f"Truth, {v} | ECE, {v}" for v in variants) + " |"
    lines = [head, "|---|---|" + "---|---|" * len(variants)]
    for name in report["sets"]:
        parts = [report["leave_one_set_out"][v][name] for v in variants]
        lines.append(f"| {name} | {parts[0]['questions']} | "
                     + " | ".join(f"{p['truth']:+.3f} | {p['ece']:.3f}" for p in parts) + " |")
    means = [np.mean([p["truth"] for p in report["leave_one_set_out"][v].values()]) for v in variants]
    lines.append("| mean | | " + " | ".join(f"{m:+.3f} | " for m in means) + "|")
    return "\n".join(lines)


def model_card(report: dict[str, Any], results: Sequence[Path], model: DecisionModel) -> str:
    """The weights' card: what they decide, from which data, how well calibrated, how to rebuild them."""
    unseen, every = report["calibration_reader_unseen"], report["calibration_all"]
    low, high = report["difference"][1], report["difference"][2]
    rows = "\n".join(
        f"| {name} | {part['questions']} | {part['truth']:+.3f} | {part['truth_old_gates']:+.3f} | "
        f"{part['difference'][0]:+.3f} [{part['difference'][1]:+.3f}, {part['difference'][2]:+.3f}] |"
        for name, part in report["per_set"].items())
    weights = "\n".join(f"| {name} | {coef:+.3f} |" for name, coef in
                        sorted(zip(model.features, model.coef, strict=True), key=lambda x: -abs(x[1]))[:15])
    return f"""# The answer decision

A logistic regression over rag.answering.features.MODEL_FEATURES (standardized) ranks the candidates, and a
logistic map of the best one's log-odds z, p = sigmoid(a z + b), gives its probability of being right; the answer
node answers the best candidate, a rule's answer like any other, when that probability reaches `answer_threshold`.
Written by `python -m cragraph_lab bench decision-training` (cragraph_lab/decision_training.py).

## Leave one training set out

Fitted (ranking and calibration) on every training set but one, measured on the one left out, for each signal
set (cragraph_lab.decision_training.VARIANTS); the one with the best mean Truth ships: **{report['variant']}**.

{lodo_table(report)}

## Data

Training sets only: hipporag_legacy_train100 (hotpotqa, musique), the folders `python -m cragraph_lab bench
decision-data` writes (XQuAD training part, mostly questions the reader never trained on; NQ questions it never trained
on), and three folders of fictional pages in the style of a user's own documents, en / ru / zh, with bridge, comparison,
yes / no, unanswerable and single-hop questions, written for this training and never used in tests:
data/userlike_train (60 pages, 120 questions; written after reading the test corpus tests/data/userlike),
data/userlike_train2 (66 pages, 150 questions; written without reading either), data/userlike_train3 (60 pages,
150 questions; written without reading any of them, measured once before the decision trained on it) and
data/userlike_train7 (60 pages, 126 questions, most of them single yes / no claims, true, false or about a subject
no page names); and data/longdocs_train1 .. 23 (long sectioned documents in en / ru / zh, 36 questions each; 6 ..
21 were written blind as held-out sets, longdocs_heldout1 .. 16, and became training data once measured).
The records are made with the reader on its default backend (the exported graph on OpenVINO,
`CRAGRAPH_READER_BACKEND`): the decision reads that reader's scores, so a change of the reader's runtime
means new records. For each benchmark set, `OMP_NUM_THREADS=1 python -m cragraph_lab eval qa --dataset DIR --modes
crag-multihop --unanswerable 0.5 --limit N --out runs/decision-train` (half of the questions asked of an index without
their gold passages; N 100 for hipporag_legacy_train100 and NQ, 70 for each XQuAD folder); for each folder of pages F,
`cragraph eval folder data/F/corpus data/F/questions.jsonl --out runs/decision-train/F`; then `python -m cragraph_lab
bench decision-training runs/decision-train/*/results.jsonl --plot docs/decision_reliability.png`:
{report['questions']} questions, {report['rows']} candidates. The ranking learns a candidate as right when it holds
a gold answer and is mostly that answer (token F1 >= {MIN_F1}: the short span, not a sentence holding it); the
probability is calibrated to what Truth counts right (the answer holds a gold answer).

## Calibration (out of fold: 5 folds grouped by question; each question's chosen candidate)

| questions | n | ECE |
|---|---|---|
| reader-unseen (the reader never trained on them) | {unseen['n']} | {unseen['ece']:.3f} |
| all | {every['n']} | {every['ece']:.3f} |

Reliability plot: docs/decision_reliability.png.

## Truth at answer_threshold 0.5 against the replaced gates (out of fold, same questions)

The replaced gates: the one-pass reading's answer given when its margin >= 7.5, its passage's grade >= -0.5 and
the best evidence >= -0.2 (answer_min_margin / answer_min_grade / answer_min_score at their last defaults).
All: {report['truth']:+.3f} against {report['truth_old_gates']:+.3f}, paired difference
{report['difference'][0]:+.3f} [95% bootstrap {low:+.3f}, {high:+.3f}].

| set | questions | Truth | Truth, old gates | difference [95%] |
|---|---|---|---|---|
{rows}

## Coefficients (on standardized features, the 15 largest; every one is in decision.json)

| feature | coefficient |
|---|---|
{weights}
| intercept | {model.intercept:+.3f} |

Calibration: a = {model.calibration[0]:.3f}, b = {model.calibration[1]:+.3f}.
"""


XQUAD_UNSEEN, XQUAD_SEEN, NQ_UNSEEN, NQ_DISTRACTORS = 90, 60, 250, 350


def decision_selection(data_root: Path | None = None) -> dict[str, tuple[list[dict], list[dict], str]]:
    """The decision's XQuAD and NQ training questions, by folder name: (questions, passages, note). Per XQuAD
    language, training-part questions the reader never trained on (its validation split) and some it did, over
    every training-part passage; NQ questions from NQ_FIRST_TRAIN on that the reader never trained on, with their
    gold passages and other NQ passages as distractors. Seeded, so the selection is the same each time."""
    import random

    from cragraph_lab.reader_examples import NQ_FIRST_TRAIN
    from cragraph_lab.training_data import XQUAD, default_data_root, read_jsonl, xquad_part

    data = data_root or default_data_root()
    found = {}
    for language in ("en", "ru", "zh"):
        source = data / XQUAD / language
        questions = [q for q in read_jsonl(source / "questions.jsonl") if xquad_part(q["supporting_ids"][0]) == "train"]
        corpus = [c for c in read_jsonl(source / "corpus.jsonl") if xquad_part(c["id"]) == "train"]
        unseen = [q for q in questions if unseen_by_reader(f"{XQUAD}/{language}", q["id"], q["supporting_ids"])]
        seen = [q for q in questions if q not in unseen]
        random.Random(7).shuffle(seen)
        chosen = unseen[:XQUAD_UNSEEN] + seen[:XQUAD_SEEN]
        random.Random(8).shuffle(chosen)
        note = (f"XQuAD {language} training part: {len(chosen)} questions, {min(XQUAD_UNSEEN, len(unseen))} of them "
                f"never trained on by the reader; every training-part passage (the answer decision's training).")
        found[f"{XQUAD}__{language}"] = (chosen, corpus, note)
    source = data / "nq_open_oracle_litm"
    questions = read_jsonl(source / "questions.jsonl")[NQ_FIRST_TRAIN:]
    corpus = read_jsonl(source / "corpus.jsonl")
    unseen = [q for q in questions if unseen_by_reader("nq_open_oracle_litm", q["id"], q["supporting_ids"])]
    random.Random(9).shuffle(unseen)
    chosen = unseen[:NQ_UNSEEN]
    gold = {i for q in chosen for i in q["supporting_ids"]}
    others = [c for c in corpus if c["id"] not in gold]
    random.Random(10).shuffle(others)
    passages = [c for c in corpus if c["id"] in gold] + others[:NQ_DISTRACTORS]
    note = (f"NQ-open questions from {NQ_FIRST_TRAIN} on that the reader never trained on, {len(chosen)}, with their "
            f"gold passages and {NQ_DISTRACTORS} other NQ passages (the answer decision's training).")
    found["nq_open_oracle_litm"] = (chosen, passages, note)
    return found


def write_decision_sets(data_root: Path | None = None, out_root: Path | None = None) -> list[Path]:
    """The decision's training folders beside hipporag_legacy_train100 (decision_selection), in the user cache."""
    import shutil

    from cragraph_lab.training_data import write_dataset

    out = out_root or Path.home() / ".cache" / "cragraph" / "decision-data"
    folders = []
    for name, (questions, passages, note) in decision_selection(data_root).items():
        folder = out / name
        shutil.rmtree(folder, ignore_errors=True)
        folders.append(write_dataset(folder, questions, passages, note))
    return folders
