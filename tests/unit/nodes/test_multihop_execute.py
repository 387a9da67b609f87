"""What the plan hands to selection: the sub-questions with their slots filled by what the plan found."""

from __future__ import annotations

from nodes.multihop.execute import filled_facets
from rag.planning.runtime import PlanRun, StepValue


def test_slotted_sub_questions_are_replaced_by_every_composed_query():
    run = PlanRun(values={
        "q1": StepValue("hits"),
        "q1_ans": StepValue("values", strings=["Baltic", "Marta Kowalczyk"]),
        "q2_query": StepValue("queries", strings=["In which city was Baltic born?",
                                                  "In which city was Marta Kowalczyk born?"]),
    }, records=[], output="q1")
    facets = filled_facets(["Who or what is the director of Silver Harbor?", "In which city was {x1} born?"], run)
    assert facets == ["Who or what is the director of Silver Harbor?", "In which city was Baltic born?",
                      "In which city was Marta Kowalczyk born?"]
    assert filled_facets(["In which city was {x1} born?"], PlanRun(values={}, records=[], output="")) == []
