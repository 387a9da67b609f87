"""Reader training examples: how many passages each example reads."""

from __future__ import annotations

import random

import pytest

from cragraph_lab.reader_examples import (
    Distractors,
    _make,
    in_validation,
    long_document_folders,
    long_document_rows,
    training_examples,
    unseen_by_reader,
    validation_key,
)

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


LONG = {
    "r#0": {"id": "r#0", "title": "Report", "text": "The board is chaired by Ada Lind. The director is Bo Ek."},
    "r#1": {"id": "r#1", "title": "Report", "text": "The Harbour unit is headed by Bo Ek since 2019."},
    "r#2": {"id": "r#2", "title": "Report", "text": "Sites: Marsh, Fell and Dune."},
}


def test_a_long_document_question_reads_the_chunk_holding_its_answer_that_is_most_like_it() -> None:
    questions = [
        {"id": "en-relation-01", "question": "Which unit is headed by Bo Ek?", "answers": ["Harbour"],
         "type": "relation", "language": "en"},
        {"id": "en-relation-02", "question": "Who is the director?", "answers": ["Bo Ek"], "type": "relation",
         "language": "en"},
        {"id": "en-list-01", "question": "Which sites?", "answers": ["Marsh"], "type": "list", "language": "en"},
        {"id": "en-simple-01", "question": "Who founded it?", "answers": ["Cy Ro"], "type": "simple",
         "language": "en"},
    ]
    rows = long_document_rows(LONG, questions)
    assert [(r["id"], r["supporting_ids"]) for r in rows] == [("en-relation-01", ["r#1"]),
                                                             ("en-relation-02", ["r#0"])]


def test_long_document_folders_split_by_folder_and_question_id() -> None:
    assert validation_key("longdocs_train3", "en-simple-01", []) == "longdocs_train3:en-simple-01"
    # their records name no gold passage: one question of each side of the split, by folder and id
    assert in_validation("longdocs_train7:ru-relation-02") and not in_validation("longdocs_train3:en-simple-01")
    assert unseen_by_reader("longdocs_train7", "ru-relation-02", [])
    assert not unseen_by_reader("longdocs_train3", "en-simple-01", [])
    folders = long_document_folders()
    assert folders and all(p.name.startswith("longdocs_train") for p in folders)
