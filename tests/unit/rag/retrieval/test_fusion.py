import pytest

from rag.retrieval.fusion import minmax, ranked, reciprocal_rank_fusion, weighted_score_fusion


def test_rrf_uses_one_based_ranks():
    fused = reciprocal_rank_fusion([[7, 8]], k=60)
    assert fused[7] == pytest.approx(1 / 61)
    assert fused[8] == pytest.approx(1 / 62)


def test_rrf_gives_nothing_for_a_missing_document():
    fused = reciprocal_rank_fusion([[1, 2], [2]], k=60)
    assert fused[1] == pytest.approx(1 / 61)  # no synthetic rank from the second list
    assert fused[2] == pytest.approx(1 / 62 + 1 / 61)
    assert ranked(fused) == [2, 1]


def test_rrf_weights_scale_each_list():
    fused = reciprocal_rank_fusion([[1], [2]], k=60, weights=[0.5, 1.0])
    assert fused[1] == pytest.approx(0.5 / 61)
    assert ranked(fused) == [2, 1]


def test_minmax_scales_to_unit_interval_and_handles_constant_lists():
    assert minmax({1: 2.0, 2: 4.0, 3: 3.0}) == {1: 0.0, 2: 1.0, 3: 0.5}
    assert minmax({1: 5.0}) == {1: 1.0}
    assert minmax({}) == {}


def test_weighted_score_fusion_mixes_normalized_lists():
    fused = weighted_score_fusion([{1: 10.0, 2: 0.0}, {1: 0.1, 2: 0.9}], weights=[0.3, 0.7])
    assert fused[1] == pytest.approx(0.3)
    assert fused[2] == pytest.approx(0.7)


def test_ranked_breaks_ties_by_id():
    assert ranked({5: 1.0, 3: 1.0, 9: 2.0}) == [9, 3, 5]
