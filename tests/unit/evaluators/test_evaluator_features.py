"""The embedded evaluator's features and head: what each feature measures, list-relative behaviour, and the
head's storage, on hand-made vectors and a tiny word-piece table (no real models)."""

from __future__ import annotations

import numpy as np
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from evaluators.features import (
    FEATURE_NAMES,
    N_FEATURES,
    StaticPieces,
    list_features,
    local_bm25,
    maxsim_stats,
    passage_lead,
    rarity,
    rarity_bm25,
    share_in,
)
from evaluators.head import MLPHead

WORDS = ["[UNK]", "[PAD]", "?", "who", "founded", "the", "institute", "river", "bridge", "edda", "vorn", "sang",
         "song", "a", "scientist", "capital", "in", "harbour", "."]


@pytest.fixture(scope="module")
def pieces() -> StaticPieces:
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]")
    table = np.random.default_rng(0).normal(size=(len(WORDS), 8)).astype(np.float32)
    word_piece = np.array([w.isalnum() for w in WORDS])
    return StaticPieces(fast, table, frozenset(fast.all_special_ids), word_piece)


def unit(vector) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


def column(rows: np.ndarray, name: str) -> np.ndarray:
    return rows[:, FEATURE_NAMES.index(name)]


def test_passage_lead_is_the_title_of_a_title_dot_text_passage():
    assert passage_lead("Edda Vorn. Edda Vorn was a singer.") == "Edda Vorn"
    assert passage_lead("no title here") == ""
    assert passage_lead("x" * 150 + ". text") == ""  # too long to be a title


def test_share_in_and_local_bm25():
    assert share_in(["a", "b", "b"], {"a"}) == 0.5 and share_in([], {"a"}) == 0.0
    scores = local_bm25(["river", "bridge"], [["river", "bridge"], ["river"], ["city"]])
    assert scores[0] > scores[1] > scores[2] == 0.0


def test_maxsim_counts_exact_pieces_and_handles_empty_inputs(pieces):
    q_ids = pieces.piece_ids("who founded the institute ?")
    assert pieces.tokenizer.convert_tokens_to_ids("?") not in q_ids  # punctuation pieces are skipped
    p_ids = pieces.piece_ids("a scientist founded the institute")
    mean, low, q25, exact, rare_exact, rare_mean, rarest = maxsim_stats(pieces.vectors(q_ids), q_ids,
                                                                         pieces.vectors(p_ids), p_ids)
    assert exact == pytest.approx(3 / 4) and mean > low and 0 <= exact <= 1 and q25 >= low
    # "who" (the most frequent piece, lowest id) is the one missing, so rarity weighting raises the share
    assert rare_exact > exact and rarest == 1.0 and low <= rare_mean <= 1
    assert maxsim_stats(pieces.vectors(q_ids), q_ids, pieces.vectors([]), []) == (0.0,) * 7


def test_rarity_bm25_weights_rare_terms_and_is_absolute():
    weights = {"river": 1.0, "kawann": 5.0, "the": 0.1}
    coverage, bm25 = rarity_bm25(["the", "kawann", "river"], [["the", "river"], ["kawann"], ["city"]], weights)
    assert coverage[1] > coverage[0] > coverage[2] == 0.0 and bm25[1] > bm25[0] > 0 == bm25[2]
    alone, _ = rarity_bm25(["the", "kawann", "river"], [["the", "river"]], weights)
    assert alone[0] == pytest.approx(coverage[0])  # coverage does not depend on the other candidates


def test_rarity_grows_with_the_piece_id():
    assert list(np.argsort(rarity([5, 70, 105221]))) == [0, 1, 2]


def test_list_features_rank_the_matching_passage_first(pieces):
    question = "who founded the institute"
    passages = ["Institute. a scientist founded the institute in the capital", "River. the river and the bridge"]
    rows = list_features(question, passages, unit([1, 0, 0]), np.stack([unit([0.9, 0.1, 0]), unit([0.2, 1, 0])]),
                         pieces)
    assert rows.shape == (2, N_FEATURES) and rows.dtype == np.float32
    for name in ("cos", "coverage", "bm25_local", "bm25_rel", "maxsim_mean", "exact_piece_share",
                 "rare_exact_share"):
        assert column(rows, name)[0] > column(rows, name)[1], name
    assert column(rows, "cos_gap_max")[0] == 0 and column(rows, "cos_gap_max")[1] < 0
    assert list(column(rows, "cos_rank")) == [0.0, 1.0]
    assert column(rows, "lead_in_question")[0] == 1.0  # "institute" is in the question


def test_relative_features_change_with_the_list_but_absolute_ones_do_not(pieces):
    question = "who founded the institute"
    vectors = np.stack([unit([0.9, 0.1, 0]), unit([0.5, 1, 0])])
    passages = ["Institute. a scientist founded the institute", "River. the river and the bridge"]
    both = list_features(question, passages, unit([1, 0, 0]), vectors, pieces)
    alone = list_features(question, passages[1:], unit([1, 0, 0]), vectors[1:], pieces)
    for name in ("cos", "coverage", "maxsim_mean", "exact_piece_share", "log_terms"):
        assert column(alone, name)[0] == pytest.approx(column(both, name)[1]), name
    assert column(alone, "cos_gap_max")[0] == 0 > column(both, "cos_gap_max")[1]  # best of a worse list


def test_lead_linked_finds_the_second_hop_named_in_a_matching_passage(pieces):
    question = "who sang the song"
    passages = ["Song. the song was sung by edda vorn", "Edda Vorn. a singer from the capital", "Bridge. a bridge"]
    vectors = np.stack([unit([1, 0.1, 0]), unit([0.2, 1, 0]), unit([0.1, 0, 1])])
    rows = list_features(question, passages, unit([1, 0, 0]), vectors, pieces)
    linked = column(rows, "lead_linked")
    assert linked[1] == pytest.approx(float(vectors[0] @ unit([1, 0, 0])))  # its title appears in passage 0
    assert linked[2] == 0.0


def test_list_features_of_an_empty_list(pieces):
    assert list_features("q", [], unit([1, 0]), np.zeros((0, 2)), pieces).shape == (0, N_FEATURES)


def test_head_round_trips_and_maps_probabilities_into_unit_range(tmp_path):
    rng = np.random.default_rng(2)
    head = MLPHead(FEATURE_NAMES, rng.normal(size=N_FEATURES), rng.random(N_FEATURES) + 0.5,
                   [rng.normal(size=(N_FEATURES, 4)), rng.normal(size=(4, 1))], [rng.normal(size=4), np.zeros(1)],
                   {"note": "test"})
    x = rng.normal(size=(7, N_FEATURES))
    path = tmp_path / "head.npz"
    head.save(path)
    loaded = MLPHead.load(path, expected_features=FEATURE_NAMES)
    assert np.allclose(loaded.scores(x), head.scores(x), atol=1e-5) and loaded.meta == {"note": "test"}
    assert np.all(np.abs(head.scores(x * 100)) <= 1.0)
    assert np.allclose(head.scores(x), 2 * head.probabilities(x) - 1)


def test_head_refuses_other_features_and_bad_shapes(tmp_path):
    n = N_FEATURES
    path = tmp_path / "head.npz"
    MLPHead(FEATURE_NAMES, np.zeros(n), np.ones(n), [np.ones((n, 1))], [np.zeros(1)]).save(path)
    with pytest.raises(ValueError, match="retrain"):
        MLPHead.load(path, expected_features=FEATURE_NAMES[:-1])
    with pytest.raises(ValueError):
        MLPHead(FEATURE_NAMES, np.zeros(n), np.ones(n), [np.ones((n - 1, 1))], [np.zeros(1)])


def test_a_linear_head_is_monotone_in_its_feature():
    n = N_FEATURES
    weights = np.zeros((n, 1))
    weights[0, 0] = 3.0
    head = MLPHead(FEATURE_NAMES, np.zeros(n), np.ones(n), [weights], [np.zeros(1)])
    x = np.zeros((3, n))
    x[:, 0] = [-1, 0, 1]
    scores = head.scores(x)
    assert scores[0] < scores[1] < scores[2] and scores[1] == pytest.approx(0.0)


@pytest.mark.parametrize("hidden", [(), (4,), (4, 3)])
def test_averaged_heads_give_the_mean_logit(hidden):
    rng = np.random.default_rng(3)
    sizes = [N_FEATURES, *hidden, 1]
    mean, std = rng.normal(size=N_FEATURES), rng.random(N_FEATURES) + 0.5
    heads = [MLPHead(FEATURE_NAMES, mean, std,
                     [rng.normal(size=(a, b)) for a, b in zip(sizes[:-1], sizes[1:], strict=True)],
                     [rng.normal(size=b) for b in sizes[1:]]) for _ in range(3)]
    x = rng.normal(size=(9, N_FEATURES))
    merged = MLPHead.average(heads)
    assert np.allclose(merged.logits(x), np.mean([h.logits(x) for h in heads], axis=0))
