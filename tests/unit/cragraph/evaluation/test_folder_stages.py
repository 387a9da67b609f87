"""The stage columns of an `eval folder` record: where a right answer was lost."""

from cragraph.evaluation.folder_qa import stages


def test_the_stages_read_the_context_the_hops_the_candidates_and_the_withheld_answer():
    result = {"selected": [{"text": "Brine is pumped at Gullery Flats."}],
              "hops": [{"passages": [{"text": "Yusuf Aldane manages Gullery Flats."}]}],
              "abstained": True, "answer": "I do not have enough information.",
              "withheld": {"answer": "Yusuf Aldane [1]"}}
    candidates = [{"answer": "Yusuf Aldane"}, {"answer": "Gullery Flats"}]
    assert stages(result, candidates, ["Yusuf Aldane"], None) == \
        {"in_context": True, "in_candidates": True, "chosen_right": True}
    assert stages({**result, "hops": []}, candidates[1:], ["Yusuf Aldane"], None) == \
        {"in_context": False, "in_candidates": False, "chosen_right": True}


def test_a_list_is_held_by_three_quarters_of_its_items_and_unanswerable_questions_have_no_stages():
    result = {"selected": [{"text": "Units: Harvesting, Evaporation and Refining."}], "answer": "Harvesting [1]"}
    items = [["Harvesting"], ["Evaporation"], ["Refining"], ["Brine Laboratory"]]
    assert stages(result, [{"answer": "Harvesting, Evaporation, Refining"}], ["Harvesting"], items) == \
        {"in_context": True, "in_candidates": True, "chosen_right": False}
    assert stages(result, [], [], None) == {"in_context": None, "in_candidates": None, "chosen_right": None}


def test_the_summary_counts_the_stages_over_the_questions_with_an_answer():
    from cragraph.evaluation.folder_qa import markdown, summary

    records = [
        {"type": "bridge", "language": "en", "answers": ["x"], "outcome": "right", "in_context": True,
         "in_candidates": True},
        {"type": "bridge", "language": "en", "answers": ["y"], "outcome": "abstained", "in_context": True,
         "in_candidates": False},
        {"type": "unanswerable", "language": "en", "answers": [], "outcome": "abstained", "in_context": None,
         "in_candidates": None},
    ]
    table = markdown(summary(records))
    assert "| bridge | all | 2 | 1 | 0 | 1 | 2/2 | 1/2 |" in table
    assert "| unanswerable | all | 1 | 0 | 0 | 1 | - | - |" in table
