"""QA metrics: SQuAD exact match and token F1 (character F1 for Chinese), answer containment, answer-in-context
recall, citation precision, abstention and per-stage latency, aggregated per mode and per question type.

Predictions are scored with their citation markers ([1], [2]) removed. An abstention scores zero on every
answer metric: it is counted wrong, and its rate is reported beside.

Truthfulness (`Truth`) scores each question as the CRAG benchmark (Meta KDD Cup 2024) does: a correct answer +1,
an abstention 0, a wrong answer -1; `Halluc` is the share answered wrongly. Correct means the normalized gold
answer occurs in the answer (Contains), so a short answer and a sentence holding the answer count alike.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from cragraph.evaluation.metrics import percentile
from stores.scripts import CJK

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_CITATION = re.compile(r"\s*\[\d{1,3}\]")
_CJK_PUNCTUATION = "，。！？；：、“”‘’（）《》【】「」『』—…·～"
_PUNCTUATION = set(string.punctuation) | set(_CJK_PUNCTUATION) | {"«", "»", "–", "—"}

ANSWER_METRICS = ("EM", "F1", "Contains", "SemMatch", "InContext", "CtxChars", "CitePrec", "Abstain", "Truth",
                  "Halluc")


def strip_citations(text: str) -> str:
    return _CITATION.sub("", text or "").strip()


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower case, no punctuation, no English articles, single spaces."""
    text = "".join(ch for ch in (text or "").lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def has_cjk(text: str) -> bool:
    return bool(CJK.search(text or ""))


def answer_tokens(text: str) -> list[str]:
    """Normalized tokens; CJK characters are tokens of their own (the CMRC/SQuAD-zh convention)."""
    tokens: list[str] = []
    for word in normalize_answer(text).split():
        if has_cjk(word):
            buffer = ""
            for ch in word:
                if CJK.match(ch):
                    if buffer:
                        tokens.append(buffer)
                        buffer = ""
                    tokens.append(ch)
                else:
                    buffer += ch
            if buffer:
                tokens.append(buffer)
        else:
            tokens.append(word)
    return tokens


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    pred = normalize_answer(strip_citations(prediction))
    return float(any(pred == normalize_answer(g) for g in golds))


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """Best token F1 over the gold answers (characters for Chinese text)."""
    pred_tokens = answer_tokens(strip_citations(prediction))
    best = 0.0
    for gold in golds:
        gold_tokens = answer_tokens(gold)
        common = Counter(pred_tokens) & Counter(gold_tokens)
        overlap = sum(common.values())
        if not pred_tokens or not gold_tokens or overlap == 0:
            continue
        precision, recall = overlap / len(pred_tokens), overlap / len(gold_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def contains_answer(text: str, golds: Sequence[str]) -> float:
    """1.0 when a normalized gold answer occurs in the normalized text (NQ-open 'accuracy' for long answers)."""
    haystack = _padded(normalize_answer(strip_citations(text)))
    return float(any(_occurs(normalize_answer(g), haystack) for g in golds if normalize_answer(g)))


LIST_SHARE = 0.75
"""A list answer is right when it names at least this share of the items (the Graph RAG benchmark's rule)."""


def items_found(text: str, items: Sequence[Sequence[str]]) -> int:
    """How many of a list question's items (each a list of acceptable surface forms) the text names."""
    return sum(contains_answer(text, forms) > 0 for forms in items)


def holds_answer(text: str, golds: Sequence[str], items: Sequence[Sequence[str]] | None = None) -> bool:
    """The text answers the question: it names LIST_SHARE of a list question's items, else holds a gold answer."""
    if items:
        return items_found(text, items) >= math.ceil(LIST_SHARE * len(items))
    return bool(golds) and contains_answer(text, golds) > 0


def answer_in_context(passages: Iterable[str], golds: Sequence[str]) -> float:
    """1.0 when some gold answer occurs in the context handed to the answerer: the ceiling for extraction."""
    return contains_answer(" \n ".join(passages), golds)


def citation_precision(cited_doc_ids: Sequence[str], gold_ids: Sequence[str]) -> float | None:
    """Share of cited documents that are gold; None when nothing was cited (left out of the mean)."""
    cited = list(dict.fromkeys(d for d in cited_doc_ids if d))
    if not cited:
        return None
    gold = set(gold_ids)
    return sum(d in gold for d in cited) / len(cited)


def _padded(text: str) -> str:
    return f" {text} "


def _occurs(gold: str, padded_haystack: str) -> bool:
    """Whole-word occurrence for alphabetic answers; plain substring when the answer is Chinese."""
    return gold in padded_haystack if has_cjk(gold) else f" {gold} " in padded_haystack


def score_record(record: dict[str, Any]) -> dict[str, float | None]:
    """Per-question answer metrics of one mode's record (see bench.qa for the record's fields)."""
    golds = record["answers"]
    prediction = "" if record.get("abstained") else record.get("answer", "")
    correct = bool(prediction) and contains_answer(prediction, golds) > 0
    answered_wrongly = not record.get("abstained") and not correct
    return {
        "EM": exact_match(prediction, golds) if prediction else 0.0,
        "F1": token_f1(prediction, golds) if prediction else 0.0,
        "Contains": contains_answer(prediction, golds) if prediction else 0.0,
        "InContext": answer_in_context(record.get("context", []), golds),
        "CtxChars": float(sum(len(text) for text in record.get("context", []))),
        "CitePrec": citation_precision(record.get("cited_doc_ids", []), record.get("gold_ids", [])),
        "Abstain": float(bool(record.get("abstained"))),
        "Truth": 1.0 if correct else (-1.0 if answered_wrongly else 0.0),
        "Halluc": float(answered_wrongly),
    }


def mean_of(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def aggregate(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean answer metrics (records must carry `scores`), recall@k of the ranked documents and latency."""
    summary: dict[str, Any] = {"questions": len(records)}
    for name in ANSWER_METRICS:
        summary[name] = mean_of(r["scores"].get(name) for r in records)
    for k in (1, 2, 5, 10):
        summary[f"R@{k}"] = mean_of(recall_at_k(r.get("ranked_doc_ids", []), r.get("gold_ids", []), k)
                                    for r in records)
    totals = [r["total_ms"] for r in records if r.get("total_ms") is not None]
    summary["p50_ms"] = percentile(totals, 50)
    summary["p95_ms"] = percentile(totals, 95)
    return summary


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(list(dict.fromkeys(ranked))[:k])) / len(gold_set)


def recall_curve(records: Sequence[dict[str, Any]], max_k: int = 10) -> list[float]:
    """Mean recall@k for k = 1..max_k over the records' ranked documents (for the recall@k plot)."""
    return [mean_of(recall_at_k(r.get("ranked_doc_ids", []), r.get("gold_ids", []), k) for r in records) or 0.0
            for k in range(1, max_k + 1)]


def stage_latency(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """p50/p95 of each stage's duration (summed per question when a stage ran more than once)."""
    per_stage: dict[str, list[float]] = defaultdict(list)
    for record in records:
        for stage, ms in (record.get("stages") or {}).items():
            per_stage[stage].append(ms)
    return {stage: {"runs": len(values), "p50_ms": percentile(values, 50), "p95_ms": percentile(values, 95)}
            for stage, values in per_stage.items()}


def by_type(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """aggregate() per question type (meta.type, e.g. HotpotQA bridge / comparison); empty without types."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("type"):
            groups[record["type"]].append(record)
    return {name: aggregate(group) for name, group in sorted(groups.items())}
