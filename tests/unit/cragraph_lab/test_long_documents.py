"""The long-document benchmark's scoring and table (the runs themselves need the embedded models)."""

from cragraph_lab.long_documents import MODES, markdown, scored


def test_an_unanswerable_question_counts_right_when_abstained_and_others_by_their_outcome():
    assert scored({"answers": [], "outcome": "abstained"}) and not scored({"answers": [], "outcome": "wrong"})
    assert scored({"answers": ["x"], "outcome": "right"}) and not scored({"answers": ["x"], "outcome": "abstained"})


def test_the_table_has_a_row_per_mode_and_the_total_over_modes():
    report = {"questions": 3, "modes": {"hybrid": {"right": 2, "types": {"list": [1, 2], "simple": [1, 1]}},
                                        "bm25": {"right": 1, "types": {"list": [0, 2], "simple": [1, 1]}}}}
    table = markdown(report)
    assert "| hybrid | 1/2 | 1/1 | 2/3 |" in table and "| bm25 | 0/2 | 1/1 | 1/3 |" in table
    assert table.endswith("All modes: 3 of 6.") and {"hybrid", "multihop=always", "dense"} <= set(MODES)
