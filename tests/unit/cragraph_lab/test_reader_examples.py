"""Reader training examples: how many passages each example reads."""

from __future__ import annotations

import random

import pytest

from cragraph_lab.reader_examples import Distractors, _make, training_examples

CORPUS = {
    f"p{i}": {"id": f"p{i}", "title": f"Town {i}", "text": f"Town {i} lies on river {i % 3} and has {i} bridges."}
    for i in range(8)
}
ROW = {"id": "q1", "question": "How many bridges does Town 2 have?", "answers": ["2"], "supporting_ids": ["p2"]}


def _counts(min_passages: int | None) -> list[int]:
    rng, distractors = random.Random(0), Distractors(CORPUS)
    examples = [_make(ROW, CORPUS, "en", "test", distractors, 4, rng, min_passages) for _ in range(60)]
    assert all(ex.passages[ex.gold[0]].text == CORPUS["p2"]["text"] for ex in examples)
    return [len(ex.passages) for ex in examples]


def test_every_example_reads_n_passages_by_default() -> None:
    assert set(_counts(None)) == {4}
    assert set(_counts(4)) == {4}


def test_min_passages_draws_each_count_in_range_with_the_gold_kept() -> None:
    assert set(_counts(1)) == {1, 2, 3, 4}


def test_a_min_passages_outside_one_to_n_is_refused_before_any_data_is_read(tmp_path) -> None:
    for bad in (0, 5):
        with pytest.raises(ValueError, match="min_passages must be 1..n_passages"):
            training_examples(n_passages=4, data_root=tmp_path, min_passages=bad)


def test_no_distractor_is_added_when_the_gold_passages_fill_the_count() -> None:
    # asking for no distractor used to return the whole corpus whenever the gold passage was not the question's
    # nearest one (the loop only stopped after appending)
    assert Distractors(CORPUS).nearest("Which town lies on river 1?", 0, {"p2"}) == []
    row = {**ROW, "supporting_ids": ["p2", "p5"]}
    rng, distractors = random.Random(0), Distractors(CORPUS)
    counts = {len(_make(row, CORPUS, "en", "test", distractors, 4, rng, 1).passages) for _ in range(40)}
    assert counts == {2, 3, 4}
