"""The long-document benchmark's scoring and table (the runs themselves need the embedded models)."""

from cragraph_lab.long_documents import MODES, markdown, scored, stage_counts


def test_an_unanswerable_question_counts_right_when_abstained_and_others_by_their_outcome():
    assert scored({"answers": [], "outcome": "abstained"}) and not scored({"answers": [], "outcome": "wrong"})
    assert scored({"answers": ["x"], "outcome": "right"}) and not scored({"answers": ["x"], "outcome": "abstained"})


def test_the_table_has_a_row_per_mode_and_the_total_over_modes():
    report = {"questions": 3, "modes": {"hybrid": {"right": 2, "types": {"list": [1, 2], "simple": [1, 1]}},
                                        "bm25": {"right": 1, "types": {"list": [0, 2], "simple": [1, 1]}}}}
    table = markdown(report)
    assert "| hybrid | 1/2 | 1/1 | 2/3 |" in table and "| bm25 | 0/2 | 1/1 | 1/3 |" in table
    assert table.endswith("All modes: 3 of 6.") and {"hybrid", "multihop=always", "dense"} <= set(MODES)


def test_the_stage_table_counts_where_each_answered_question_was_lost():
    records = [
        {"type": "list", "answers": ["a"], "outcome": "right", "in_context": True, "in_candidates": True,
         "chosen_right": True},
        {"type": "list", "answers": ["a"], "outcome": "abstained", "in_context": True, "in_candidates": True,
         "chosen_right": True},  # withheld
        {"type": "list", "answers": ["a"], "outcome": "wrong", "in_context": True, "in_candidates": False,
         "chosen_right": False},  # the reader
        {"type": "simple", "answers": ["b"], "outcome": "wrong", "in_context": False, "in_candidates": False,
         "chosen_right": False},  # retrieval
        {"type": "unanswerable", "answers": [], "outcome": "abstained", "in_context": None},  # not counted
    ]
    stages = stage_counts(records)
    assert stages == {"list": [3, 3, 2, 2, 1], "simple": [1, 0, 0, 0, 0]}
    table = markdown({"questions": 5, "modes": {"hybrid": {"right": 2, "types": {}, "stages": stages}}})
    assert "| list | 3 | 3 | 2 | 2 | 1 |" in table and "| simple | 1 | 0 | 0 | 0 | 0 |" in table
