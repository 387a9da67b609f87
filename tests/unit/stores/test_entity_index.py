"""The entity field: IDF ranking, partial matches worth less than exact ones, deletes, allowed rows, persistence."""

import numpy as np
import pytest

from stores.entity_index import PARTIAL_WEIGHT, EntityIndex

ROWS = {
    1: ["barack obama", "chicago"],
    2: ["obama", "honolulu"],
    3: ["chicago", "illinois"],
    4: ["michelle obama", "chicago"],
    5: [],
    6: ["harvard university", "boston"],
    7: ["Stanford  University"],  # keys are casefolded and whitespace-collapsed on the way in
}


@pytest.fixture
def index():
    built = EntityIndex()
    built.add(list(ROWS), list(ROWS.values()))
    return built


def test_exact_rare_entities_rank_first_and_scores_add_up(index):
    rows, scores = index.search(["Honolulu", "Chicago"], pool=10)
    # honolulu (df 1) outweighs chicago (df 3); no row has both, so row 2 leads, then the chicago rows by row id.
    assert rows.tolist()[:4] == [2, 1, 3, 4]
    assert scores[0] == pytest.approx(np.log(1 + 7 / 1)) and scores[1] == pytest.approx(np.log(1 + 7 / 3))
    both, both_scores = index.search(["chicago", "illinois"], pool=1)
    assert both.tolist() == [3] and both_scores[0] == pytest.approx(np.log(1 + 7 / 3) + np.log(1 + 7 / 1))


def test_partial_token_overlap_is_worth_less_than_exact(index):
    rows, scores = index.search(["obama"], pool=10)
    assert rows[0] == 2, "the exact entity comes first"
    partial = dict(zip(rows.tolist(), scores.tolist(), strict=True))
    assert {1, 4} <= set(partial) and partial[1] < partial[2] and partial[4] < partial[2]
    assert partial[1] <= PARTIAL_WEIGHT * np.log(1 + 7 / 1)
    assert 3 not in partial, "a row without any shared word is not a match"
    # A common word shared with the query counts for less than a rare one.
    uni, uni_scores = index.search(["harvard university"], pool=10)
    assert uni.tolist() == [6, 7] and uni_scores[1] < 0.5 * uni_scores[0]


def test_pool_allowed_rows_and_no_match(index):
    rows, _ = index.search(["chicago"], pool=2)
    assert rows.tolist() == [1, 3]
    rows, _ = index.search(["chicago"], pool=10, allowed=np.asarray([3, 4, 6]))
    assert rows.tolist() == [3, 4]
    empty_rows, empty_scores = index.search(["atlantis", "  "], pool=5)
    assert empty_rows.size == 0 and empty_scores.size == 0 and empty_rows.dtype == np.int64


def test_delete_and_replace_keep_postings_in_step(index):
    index.delete([2, 99])
    rows, _ = index.search(["honolulu"], pool=5)
    assert rows.size == 0 and len(index) == 6
    assert index.entities_of([1, 2, 7]) == [["barack obama", "chicago"], [], ["stanford university"]]
    index.add([3], [["springfield"]])  # a changed chunk: its old entities are gone
    assert index.search(["illinois"], pool=5)[0].size == 0
    assert index.search(["springfield"], pool=5)[0].tolist() == [3]
    with pytest.raises(ValueError):
        index.add([1, 2], [["x"]])


def test_save_load_round_trip(index, tmp_path):
    index.delete([4])
    files = index.save(tmp_path / "entities")
    assert sorted(files) == sorted(p.name for p in (tmp_path / "entities").iterdir())
    loaded = EntityIndex.load(tmp_path / "entities")
    assert len(loaded) == len(index) == 6 and loaded.vocabulary_size == index.vocabulary_size
    assert loaded.entities_of(sorted(ROWS)) == index.entities_of(sorted(ROWS))
    for query in (["obama"], ["chicago", "boston"], ["university"]):
        expected, expected_scores = index.search(query, pool=10)
        got, got_scores = loaded.search(query, pool=10)
        assert got.tolist() == expected.tolist() and np.allclose(got_scores, expected_scores)


def test_empty_index_saves_and_searches(tmp_path):
    empty = EntityIndex()
    empty.save(tmp_path)
    assert len(EntityIndex.load(tmp_path)) == 0
    assert EntityIndex().search(["x y"], pool=3)[0].size == 0
