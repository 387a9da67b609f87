"""Paired differences against plain: the interval's arithmetic, the pairing by question, the rendered tables."""

from __future__ import annotations

import pytest

from cragraph_lab.paired import against_baseline, captioned, difference_table, paired_difference


def test_identical_scores_differ_by_nothing_with_no_spread():
    same = paired_difference([1, 0, -1, 1], [1, 0, -1, 1])
    assert (same.mean, same.low, same.high, same.questions) == (0.0, 0.0, 0.0, 4)


def test_pairing_narrows_the_interval_of_a_consistent_gain():
    # ours is one better on every question though both vary widely: the difference is exactly +1
    gain = paired_difference([1, 0, 1, 0, 1, 0], [0, -1, 0, -1, 0, -1])
    assert (gain.mean, gain.low, gain.high) == (1.0, 1.0, 1.0)


def test_one_question_in_two_hundred_is_no_difference():
    ours, theirs = [0.0] * 200, [0.0] * 200
    ours[7] = 1.0
    found = paired_difference(ours, theirs)
    assert found.mean == pytest.approx(0.005)
    assert found.low <= 0.0 < found.high


def test_a_real_gain_excludes_zero_and_the_draw_is_seeded():
    ours, theirs = [1.0] * 60 + [0.0] * 140, [0.0] * 200
    first, again = paired_difference(ours, theirs), paired_difference(ours, theirs)
    assert first == again
    assert first.mean == pytest.approx(0.3)
    assert 0.0 < first.low < first.mean < first.high < 0.5


def test_mismatched_or_empty_scores_are_refused():
    with pytest.raises(ValueError, match="same questions"):
        paired_difference([1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="no questions"):
        paired_difference([], [])


def _record(mode: str, question: str, em: float, truth: float) -> dict:
    return {"mode": mode, "id": question, "scores": {"EM": em, "Contains": em, "Truth": truth}}


def test_against_baseline_pairs_by_question_id_and_skips_unshared_ones():
    records = [_record("plain", "q1", 1, 1), _record("plain", "q2", 0, -1), _record("plain", "q3", 0, -1),
               _record("crag", "q2", 1, 1), _record("crag", "q1", 1, 1),  # q3 not answered by crag
               _record("rank-bm25", "q1", 0, 0)]
    paired = against_baseline(records, ["plain", "crag", "rank-bm25"])
    assert set(paired) == {"crag", "rank-bm25"}
    assert paired["crag"]["EM"]["mean"] == 0.5 and paired["crag"]["EM"]["questions"] == 2
    assert paired["crag"]["Truth"]["mean"] == 1.0
    assert paired["rank-bm25"]["Truth"]["mean"] == -1.0 and paired["rank-bm25"]["EM"]["questions"] == 1
    assert against_baseline([_record("crag", "q1", 1, 1)], ["crag"]) == {}  # no baseline, nothing to say


def test_difference_table_shows_signed_means_and_intervals():
    summary = {"plain": {}, "crag": {"against_plain": {
        "EM": {"mean": -0.025, "low": -0.06, "high": 0.01, "questions": 200},
        "Contains": {"mean": 0.0, "low": -0.03, "high": 0.03, "questions": 200},
        "Truth": {"mean": 0.06, "low": 0.01, "high": 0.11, "questions": 200}}}}
    table = difference_table(summary)
    assert table.splitlines()[0] == "| mode | EM - plain | Contains - plain | Truth - plain |"
    assert "| crag | -0.025 [-0.060, +0.010] | +0.000 [-0.030, +0.030] | +0.060 [+0.010, +0.110] |" in table
    assert difference_table({"plain": {}}) == ""
    assert captioned(table) == ["", captioned(table)[1], "", table] and captioned(table)[1].startswith("Against plain")
    assert captioned("") == []
