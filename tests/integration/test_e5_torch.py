"""The plain-torch e5-small (models/e5_torch.py) against the sentence-transformers model it stands in for:
the same token ids, the same hidden states bit for bit (so the torch reader reads the states the exported graph
computes), the same reader scores; and on an ONNX / OpenVINO embedder the reader and the evaluator load
without importing sentence-transformers or transformers' model code (most of a cold `cragraph ask`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from models.e5_torch import LightE5, light_e5
from models.embedder import load_embedder

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["query: Who founded the Radium Institute?",
         "passage: The Radium Institute in Warsaw was founded by Marie Curie in 1932. " * 12,
         "Кошка сидит на крыше. 猫坐在屋顶上。", "ok"]


@pytest.fixture(scope="module")
def sentence_transformers_e5():
    return load_embedder("e5-small", backend="torch").model


def test_the_same_ids_and_hidden_states_bit_for_bit(sentence_transformers_e5):
    reference = sentence_transformers_e5
    light = light_e5()
    for text in TEXTS:
        theirs = reference.tokenizer(text, return_tensors="pt")
        assert light.tokenizer(text)["input_ids"] == theirs["input_ids"][0].tolist()
        ids = theirs["input_ids"]
        with torch.inference_mode():
            expected = reference[0].auto_model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            got = light.bert(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
        assert torch.equal(got, expected), float((got - expected).abs().max())
    batch = reference.tokenizer(TEXTS, padding=True, return_tensors="pt")  # transformers' ids, padded
    with torch.inference_mode():
        expected = reference[0].auto_model(**{k: batch[k] for k in ("input_ids", "attention_mask")}).last_hidden_state
        got = light.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    real = batch["attention_mask"].bool()
    assert float((got - expected)[real].abs().max()) < 1e-4  # padded rows: the real tokens' states


def test_the_tokenizer_answers_the_readers_and_evaluators_calls_as_transformers_does(sentence_transformers_e5):
    theirs, ours = sentence_transformers_e5.tokenizer, light_e5().tokenizer
    long_text = " ".join(TEXTS) * 40  # past 512 pieces (not one letter repeated: see models/piece_tokenizer.py)
    texts = [*TEXTS, "", "  two  spaces  ", "Ｆｕｌｌ ｗｉｄｔｈ and e\u0301 accents", long_text, "词" * 700]
    for text in texts:
        for kwargs in ({}, {"add_special_tokens": False}, {"add_special_tokens": False, "truncation": True,
                                                            "max_length": 512}, {"truncation": True, "max_length": 64}):
            mine, reference = ours(text, **kwargs), theirs(text, **kwargs)
            assert mine["input_ids"] == reference["input_ids"], (text[:40], kwargs)
        mine = ours(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        assert mine == [tuple(o) for o in theirs(text, add_special_tokens=False,
                                                 return_offsets_mapping=True)["offset_mapping"]]
        assert ours.tokenize(text) == theirs.tokenize(text)
        for question in ("query: Who founded it?", "query: " + "why " * 200):
            kwargs = {"truncation": "only_second", "max_length": 384, "return_offsets_mapping": True}
            if len(theirs(question, add_special_tokens=False)["input_ids"]) > 300:
                continue  # the reader cuts a question to half of max_length first (reader/inputs.py)
            mine, reference = ours(question, text, **kwargs), theirs(question, text, **kwargs)
            assert mine["input_ids"] == reference["input_ids"]
            assert mine["offset_mapping"] == [tuple(o) for o in reference["offset_mapping"]]
            assert mine.sequence_ids() == reference.sequence_ids()
    assert ours.all_special_ids == sorted(theirs.all_special_ids) and ours.unk_token_id == theirs.unk_token_id
    for piece in ("▁", "query", ":", "passage", "▁passage", "no-such-piece-xyz"):
        assert ours.convert_tokens_to_ids(piece) == theirs.convert_tokens_to_ids(piece)
    ids = list(range(0, 250037, 997))
    assert ours.convert_ids_to_tokens(ids) == theirs.convert_ids_to_tokens(ids)


def test_the_reader_scores_the_same_on_either_model(sentence_transformers_e5):
    from rag.reader.encoder import Bottom, TorchSpans, embedder_bert
    from rag.reader.reader import DEFAULT_WEIGHTS, Reader
    from rag.reader.types import Passage

    reader = Reader.load(DEFAULT_WEIGHTS, backend="torch")
    fp32 = sentence_transformers_e5
    light: LightE5 = light_e5()
    passages = [Passage(text=TEXTS[1].removeprefix("passage: "), title="Radium Institute")]
    scores = []
    for bert, tokenizer in ((embedder_bert(fp32), fp32.tokenizer), (light.bert, light.tokenizer)):
        one = Reader(TorchSpans(reader.spans_of.head, Bottom(bert, reader.config["split"])), tokenizer,
                     reader.config)
        scores.append(one.score("Who founded the Radium Institute?", passages, "en"))
    assert (scores[0].start == scores[1].start).all() and (scores[0].end == scores[1].end).all()


def test_reader_evaluator_and_ner_on_openvino_import_no_model_library_nor_torch():
    from models.e5_rebuild import ensure_rebuilt_e5_small
    from models.onnx_embedder import ensure_onnx
    from rag.reader.graph import ensure_graph
    from rag.reader.reader import DEFAULT_WEIGHTS, read_weights

    ensure_onnx(ensure_rebuilt_e5_small())  # exported once per user, with torch: not this test's subject
    ensure_graph(DEFAULT_WEIGHTS, *read_weights(DEFAULT_WEIGHTS))
    code = ("import sys\n"
            "from rag.reader.cache import load_reader\n"
            "from evaluators.embedded import EmbeddedEvaluator\n"
            "from stores.ner import spacy_english\n"
            "scores = EmbeddedEvaluator().score('who founded it?', ['Marie Curie founded it.', 'A river.'])\n"
            "answer = load_reader().read('Who founded it?', ['It was founded by Marie Curie in 1932.'], 'en')\n"
            "assert len(scores) == 2 and answer.text == 'Marie Curie', answer\n"
            "assert [e.label_ for e in spacy_english()('Marie Curie lived in Paris.').ents]\n"
            "print(sorted(m for m in ('sentence_transformers', 'transformers.modeling_utils', 'torch')"
            " if m in sys.modules))\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CRAGRAPH_EMBED_BACKEND": "openvino",
           "CRAGRAPH_READER_BACKEND": "openvino"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
