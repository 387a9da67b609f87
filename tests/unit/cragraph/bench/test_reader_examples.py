"""Reader training examples: how many passages each example reads."""

from __future__ import annotations

import random

from cragraph.bench.reader_examples import Distractors, _make

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
