"""The lab's verifier (its weights over the packaged reader): a page that states the answer in other words, a
page that does not say; long pages read in windows; bad weights and input. (Whether a given answer is the one a page
states is not what these weights learned: VERIFIER_CARD.md; the claim reading weighs a value with the reader.)"""

from __future__ import annotations

import shutil

import pytest

from cragraph_lab.verifier import (
    CONFIG_FILE,
    DEFAULT_WEIGHTS,
    TRAINING_COMMAND,
    WEIGHTS_FILE,
    Verifier,
    VerifierWeightsError,
    load_verifier,
    marked,
    windows,
)
from rag.reader.cache import load_reader
from rag.reader.types import Passage

CURIE = Passage("Marie Curie was a physicist and chemist who conducted pioneering research on radioactivity. "
                "In 1911 she received the Nobel Prize in Chemistry for the discovery of polonium and radium. "
                "She was born in Warsaw and later moved to Paris.", "Marie Curie")
LANDAU = Passage("Lev Davidovich Landau was a Soviet physicist. Landau was born on 22 January 1908 in Baku, "
                 "where his father worked as an engineer. He studied in Leningrad and worked in Kharkiv and "
                 "Moscow.", "Lev Landau")
HARBOUR = Passage("The old harbour of Kelvaston was rebuilt in 1872. Its breakwater is 640 metres long and "
                  "shelters a fishing fleet of about forty boats.", "Kelvaston Harbour")


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return load_verifier(load_reader(backend="torch"))


def test_a_page_stating_the_answer_in_other_words_states_it(verifier):
    stated, = verifier.verify("What did Marie Curie discover?", [CURIE], "en", answer="polonium")
    assert stated.stated > max(stated.contradicted, stated.absent)


def test_a_page_that_does_not_speak_of_the_question_does_not_say(verifier):
    elsewhere, = verifier.verify("Where was Lev Landau born?", [HARBOUR], "en", answer="Baku")
    about, = verifier.verify("Where was Lev Landau born?", [LANDAU], "en")
    assert elsewhere.absent > 0.5 and about.says > elsewhere.says


def test_a_long_page_is_read_in_windows_and_its_last_window_counts(verifier):
    filler = " ".join(f"The harbour master's report number {i} lists the boats that came in that week." for i in
                      range(30))
    long = Passage(filler + " Lev Landau was born in Baku in 1908.", "Reports")
    parts = windows(long, "en", verifier.config["window_tokens"], verifier.reader.count_tokens)
    assert len(parts) > 2 and "Baku" in parts[-1] and all(p.startswith("Reports: ") for p in parts)
    found, = verifier.verify("Where was Lev Landau born?", [long], "en", answer="Baku")
    assert "Baku" in found.window and found.stated > found.absent


def test_a_claim_of_only_whitespace_is_refused(verifier):
    with pytest.raises(ValueError, match="whitespace"):
        verifier.verify("   ", [CURIE], "en", answer=" ")


def test_missing_or_damaged_weights_name_the_file_and_the_training_command(tmp_path):
    reader = load_reader(backend="torch")
    with pytest.raises(VerifierWeightsError, match="missing") as missing:
        Verifier.load(reader, tmp_path)
    assert str(tmp_path / CONFIG_FILE) in str(missing.value) and TRAINING_COMMAND in str(missing.value)
    shutil.copy(DEFAULT_WEIGHTS / CONFIG_FILE, tmp_path / CONFIG_FILE)
    (tmp_path / WEIGHTS_FILE).write_bytes(b"not a zip")
    with pytest.raises(VerifierWeightsError, match="damaged") as damaged:
        Verifier.load(reader, tmp_path)
    assert str(tmp_path / WEIGHTS_FILE) in str(damaged.value)


def test_the_proposed_answer_is_read_marked_in_its_place_and_a_page_without_it_does_not_state_it(verifier):
    assert marked("Landau was born in  Baku in 1908.", "baku") == "Landau was born in  <<Baku>> in 1908."
    assert marked("Landau was born in Baku.", "Tbilisi") is None
    assert marked("Landau was born in Baku.", " ") == "Landau was born in Baku."
    absent, = verifier.verify("Where was Lev Landau born?", [LANDAU], "en", answer="Tbilisi")
    assert (absent.stated, absent.absent) == (0.0, 1.0)
