"""Semantic-match judge and its calibration; the binary grader; the PNG plots."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from cragraph_lab.peers import binary_grade
from cragraph_lab.plots import latency_plot, recall_plot
from cragraph_lab.semantic_match import SemanticJudge, answer_language, best_threshold, calibrate, labelled_pairs


class WordEmbedder:
    """A tiny deterministic bag-of-words embedder: texts sharing words have high cosine."""

    def __init__(self) -> None:
        self.calls = 0

    def embed_queries(self, texts):
        self.calls += 1
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                vectors[row, zlib.crc32(word.encode()) % 64] += 1.0
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


def test_best_threshold_separates_labels():
    cut, accuracy = best_threshold([0.9, 0.8, 0.85, 0.3, 0.4, 0.5], [1, 1, 1, 0, 0, 0])
    assert 0.5 < cut <= 0.8 and accuracy == 1.0
    with pytest.raises(ValueError):
        best_threshold([0.1, 0.2], [1, 1])


def test_judge_matches_paraphrase_and_rejects_other_answer():
    judge = SemanticJudge(WordEmbedder(), threshold=0.5)
    assert judge.matches("The band is Rush [1]", ["band Rush"]) == 1.0
    assert judge.matches("Paris is the capital", ["band Rush"]) == 0.0
    assert judge.similarity("", ["Rush"]) == -1.0
    embedder = judge.embedder
    judge.similarities([("The band is Rush [1]", ["band Rush"])])
    calls = embedder.calls
    judge.similarity("The band is Rush [1]", ["band Rush"])
    assert embedder.calls == calls  # cached by text


def test_calibration_pairs_and_threshold():
    records = [{"id": f"q{i}", "answer": f"The answer is word{i} here [1]", "answers": [f"word{i}"],
                "abstained": False} for i in range(20)]
    records.append({"id": "x", "answer": "abstained", "answers": ["nothing"], "abstained": True})
    pairs = labelled_pairs(records)
    assert sum(label for *_, label in pairs) == 20
    assert all(p != "abstained" for p, *_ in pairs)
    result = calibrate([records[:10], records[10:]], SemanticJudge(WordEmbedder()))
    assert set(result) == {"en"}
    assert result["en"]["positives"] == 20 and result["en"]["pairs"] > 30
    assert result["en"]["balanced_accuracy"] > 0.9 and result["en"]["tpr"] > 0.9


def test_threshold_per_answer_language():
    judge = SemanticJudge(WordEmbedder(), threshold={"en": 0.5, "ru": 0.6, "zh": 0.9})
    assert [answer_language(t) for t in ("18 球", "Москва", "Rush")] == ["zh", "ru", "en"]
    assert (judge.threshold_for(["18 球"]), judge.threshold_for(["Москва"]), judge.threshold_for(["x"])) == (
        0.9, 0.6, 0.5)
    assert SemanticJudge(WordEmbedder(), threshold=0.7).threshold_for(["18 球"]) == 0.7


def test_binary_grade_is_one_cut():
    assert binary_grade([0.5, -0.1, 0.0], cut=0.0) == [True, False, True]


def test_plots_write_png(tmp_path):
    summary = {"crag": {"recall_curve": [0.4, 0.7, 0.9], "stages": {"retrieve": {"p50_ms": 30.0},
                                                                     "answer": {"p50_ms": 5.0}}},
               "rank-bm25": {"recall_curve": [0.3, 0.5, 0.6], "stages": {"retrieve": {"p50_ms": 3.0}}}}
    for path in (recall_plot(summary, tmp_path / "r.png", "toy"), latency_plot(summary, tmp_path / "l.png")):
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
