"""Training the embedded evaluator: ROC-AUC, the XQuAD split, set cuts, weights, the head fit, and hard-negative
mining through the real index path on a tiny dataset with the tiny test embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cragraph_lab.evaluator_training import (
    ListExamples,
    example_weights,
    mine_examples,
    roc_auc,
    train_head,
    validation_mask,
)
from cragraph_lab.training_data import TrainingSet, prefix_subset, xquad_part, xquad_subset
from evaluators.embedded import EmbeddedEvaluator, RelevanceFeatures
from evaluators.features import FEATURE_NAMES, N_FEATURES
from models.embedder import Embedder


def test_roc_auc_matches_pairwise_counting_with_ties():
    rng = np.random.default_rng(0)
    labels = rng.random(200) < 0.3
    scores = np.round(rng.random(200) + labels * 0.3, 1)  # coarse rounding makes many ties
    pos, neg = scores[labels], scores[~labels]
    expected = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (
        len(pos) * len(neg))
    assert roc_auc(labels, scores) == pytest.approx(expected)
    assert roc_auc([True, False], [1.0, 0.0]) == 1.0 and roc_auc([True, False], [0.0, 1.0]) == 0.0
    assert np.isnan(roc_auc([True, True], [0.1, 0.2]))


def test_roc_auc_weights_count_like_repeated_pairs():
    labels = np.array([1, 0, 0], dtype=bool)
    scores = np.array([0.5, 0.9, 0.1])
    assert roc_auc(labels, scores, np.array([1.0, 3.0, 1.0])) == pytest.approx(0.25)
    assert roc_auc(np.array([1, 0, 0, 0, 0], bool), np.array([0.5, 0.9, 0.9, 0.9, 0.1])) == pytest.approx(0.25)


def test_xquad_split_is_deterministic_parallel_and_about_half():
    assert xquad_part("xqen-000123") == xquad_part("xqru-000123") == xquad_part("xqzh-000123")
    parts = [xquad_part(f"xqen-{i:06d}") for i in range(240)]
    assert 0.35 < parts.count("test") / len(parts) < 0.65
    assert parts == [xquad_part(f"xqen-{i:06d}") for i in range(240)]


def _write(folder: Path, questions: list[dict], corpus: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("questions.jsonl", questions), ("corpus.jsonl", corpus)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_prefix_subset_keeps_questions_and_the_corpus_up_to_their_last_gold(tmp_path):
    corpus = [{"id": f"p{i}", "title": f"T{i}", "text": f"text {i}"} for i in range(10)]
    questions = [{"id": "q0", "question": "a", "supporting_ids": ["p1", "p3"]},
                 {"id": "q1", "question": "b", "supporting_ids": ["missing"]},
                 {"id": "q2", "question": "c", "supporting_ids": ["p5"]},
                 {"id": "q3", "question": "d", "supporting_ids": ["p8"]}]
    folder = _write(tmp_path / "set", questions, corpus)
    kept, cut = prefix_subset(folder, TrainingSet("set", max_questions=2, corpus_margin=1))
    assert [q["id"] for q in kept] == ["q0", "q2"]  # q1's gold is not in the corpus
    assert [c["id"] for c in cut] == [f"p{i}" for i in range(7)]


def test_xquad_subset_keeps_only_the_part_and_its_questions(tmp_path):
    corpus = [{"id": f"xqen-{i:06d}", "title": "t", "text": f"passage {i}"} for i in range(40)]
    questions = [{"id": f"q{i}", "question": "?", "supporting_ids": [f"xqen-{i:06d}"]} for i in range(40)]
    folder = _write(tmp_path / "en", questions, corpus)
    train_q, train_c = xquad_subset(folder, "train")
    test_q, test_c = xquad_subset(folder, "test")
    assert {c["id"] for c in train_c}.isdisjoint({c["id"] for c in test_c})
    assert len(train_c) + len(test_c) == 40 and len(train_q) + len(test_q) == 40
    assert all(xquad_part(q["supporting_ids"][0]) == "test" for q in test_q)


def test_example_weights_share_the_set_weight():
    examples = ListExamples(np.zeros((6, N_FEATURES)), np.array([1, 0, 0, 0, 0, 0]), np.zeros(6, int),
                            np.array([False, False, False, True, True, True]))
    weights = example_weights(examples, 2.0)
    assert weights[:3].sum() == pytest.approx(2.0) and weights[3:].sum() == pytest.approx(1.0)


def test_validation_mask_is_stable_and_roughly_fifteen_percent():
    keys = [f"set/q{i}" for i in range(2000)]
    mask = validation_mask(keys)
    assert 0.11 < mask.mean() < 0.19 and (mask == validation_mask(keys)).all()


def test_train_head_learns_a_separable_signal():
    rng = np.random.default_rng(1)
    labels = (rng.random(3000) < 0.2).astype(np.int8)
    features = rng.normal(size=(3000, N_FEATURES)).astype(np.float32)
    features[:, 0] += 2.5 * labels  # only the cosine column carries the label
    head, fit = train_head(features, labels, np.ones(3000), validation_mask([str(i) for i in range(3000)]),
                           epochs=20, lr=1e-2, progress=False)
    assert fit["validation_auc"] > 0.9
    assert roc_auc(labels.astype(bool), head.scores(features)) > 0.9
    assert head.feature_names == FEATURE_NAMES


@pytest.fixture
def tiny_dataset(tmp_path) -> Path:
    corpus = [
        {"id": "d0", "title": "Old Harbour", "text": "the river flows through the city near the old harbour"},
        {"id": "d1", "title": "Institute", "text": "a scientist founded an institute in the capital"},
        {"id": "d2", "title": "Bridge", "text": "the bridge crosses the river near the harbour"},
        {"id": "d3", "title": "Chemistry", "text": "physics and chemistry were studied in the capital"},
    ]
    questions = [{"id": "q0", "question": "who founded the institute in the capital", "answers": ["a scientist"],
                  "supporting_ids": ["d1"]},
                 {"id": "q1", "question": "what crosses the river", "answers": ["the bridge"],
                  "supporting_ids": ["d2"]}]
    return _write(tmp_path / "tiny", questions, corpus)


def test_mining_labels_top_lists_and_adds_gold_removed_lists(tiny_dataset, tiny_embedder_dir, tmp_path):
    extractor = RelevanceFeatures(str(tiny_embedder_dir))
    examples = mine_examples(tiny_dataset, extractor, tmp_path / "features", progress=False)
    assert examples.features.shape[1] == N_FEATURES and np.isfinite(examples.features).all()
    assert examples.question_ids == ["q0", "q1"]
    full, removed = ~examples.removed, examples.removed
    assert examples.labels[full].sum() == 2  # each question's one gold passage is in its full list
    assert removed.any() and examples.labels[removed].sum() == 0
    again = mine_examples(tiny_dataset, extractor, tmp_path / "features", progress=False)  # from the cache
    assert np.array_equal(again.features, examples.features)


def test_embedded_evaluator_scores_a_list_together_with_a_saved_head(tiny_embedder_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    from evaluators.head import MLPHead

    weights = np.zeros((N_FEATURES, 1))
    weights[FEATURE_NAMES.index("coverage"), 0] = 4.0
    path = tmp_path / "head.npz"
    MLPHead(FEATURE_NAMES, np.zeros(N_FEATURES), np.ones(N_FEATURES), [weights], [np.array([-2.0])]).save(path)
    embedder = Embedder("tiny", SentenceTransformer(str(tiny_embedder_dir), local_files_only=True))
    evaluator = EmbeddedEvaluator(path, embedder_name="tiny", embedder=embedder, use_embedding_cache=False)
    passages = ["a scientist founded an institute in the capital", "the harbour is near the bridge", ""]
    scores = evaluator.score("who founded the institute in the capital", passages, batch_size=1)
    assert len(scores) == 3 and all(-1 <= s <= 1 for s in scores)
    assert scores[0] > 0.5 > scores[1]  # full term coverage vs none
    assert evaluator.score("anything", []) == []


def test_embedded_evaluator_refuses_missing_weights(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-evaluator"):
        EmbeddedEvaluator(tmp_path / "absent.npz")
    with pytest.raises(FileNotFoundError, match="train-evaluator --crosslingual"):
        EmbeddedEvaluator(crosslingual_weights=tmp_path / "absent.npz")


def test_passages_in_another_language_and_script_are_scored_by_the_crosslingual_head(tiny_embedder_dir,
                                                                                      tmp_path):
    from sentence_transformers import SentenceTransformer

    from evaluators.head import MLPHead

    def constant(logit: float, path: Path) -> Path:  # a head whose score ignores the features
        MLPHead(FEATURE_NAMES, np.zeros(N_FEATURES), np.ones(N_FEATURES), [np.zeros((N_FEATURES, 1))],
                [np.array([logit])]).save(path)
        return path

    embedder = Embedder("tiny", SentenceTransformer(str(tiny_embedder_dir), local_files_only=True))
    evaluator = EmbeddedEvaluator(constant(-3.0, tmp_path / "main.npz"), embedder_name="tiny", embedder=embedder,
                                  use_embedding_cache=False, crosslingual_weights=constant(3.0, tmp_path / "x.npz"))
    passages = ["Kazan stands on the Volga.", "Казань стоит на Волге.", "喀山位于伏尔加河畔。", "1914", ""]
    main, cross = np.tanh(-1.5), np.tanh(1.5)  # 2 * sigmoid(x) - 1
    assert evaluator.score("Where is Kazan?", passages) == pytest.approx([main, cross, cross, main, main])
    assert evaluator.score("Где Казань?", passages) == pytest.approx([cross, main, cross, main, main])
    # mostly Latin letters, but a Chinese question: Chinese passages are its own language
    assert evaluator.score("Halvmere Open 2019的冠军是谁？", passages) == pytest.approx([main, cross, main, main, main])
    without = EmbeddedEvaluator(tmp_path / "main.npz", embedder_name="tiny", embedder=embedder,
                                use_embedding_cache=False, crosslingual_weights=None)
    assert without.score("Where is Kazan?", passages) == pytest.approx([main] * 5)
