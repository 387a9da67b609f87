"""Relevance evaluators: the CRAG rule, batching, and each backend's real loading code on tiny models."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from evaluators.base import RelevanceEvaluator, grade, resolve_model_source
from evaluators.cosine import UNCALIBRATED, CosineEvaluator, calibration_points, default_calibration, map_cosines
from evaluators.llm_grader import LLMGraderEvaluator, parse_relevance
from evaluators.registry import ACCEPTED_FORMS, EMBEDDED_EVALUATOR_SPEC, clear_evaluator_cache, load_evaluator
from models.scripted import ScriptedChatModel

SENTENCES = [
    "the river flows through the old city and the bridge crosses it",
    "a scientist founded an institute in the capital to study physics",
    "who founded the institute where physics was studied",
    "the harbour is near the bridge over the river",
]
QUESTION = "who founded the institute in the capital"
PASSAGES = [SENTENCES[0], SENTENCES[1], SENTENCES[3], "physics and chemistry"]
LONG_PASSAGE = " ".join(SENTENCES * 40)


# --- the CRAG rule -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([0.7, -1.0], "correct"),  # any score above upper
        ([-0.995, -1.0], "incorrect"),  # all below lower
        ([], "incorrect"),  # nothing retrieved
        ([0.59, -1.0], "ambiguous"),  # equal to upper is not above it
        ([-0.99, -1.0], "ambiguous"),  # equal to lower is not below it
        ([0.1, -0.5], "ambiguous"),
    ],
)
def test_grade_follows_the_crag_rule(scores, expected):
    assert grade(scores, upper=0.59, lower=-0.99) == expected
    assert RelevanceEvaluator.grade(scores, 0.59, -0.99) == expected


def test_grade_rejects_inverted_thresholds():
    with pytest.raises(ValueError, match="upper >= lower"):
        grade([0.0], upper=-0.5, lower=0.5)
    assert grade([0.2], upper=0.2, lower=0.2) == "ambiguous"


class _LengthEvaluator(RelevanceEvaluator):
    """Scores by passage length, outside [-1, 1] on purpose, and records its batches."""

    name = "length"

    def __init__(self) -> None:
        self.batches: list[int] = []

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        self.batches.append(len(passages))
        return [len(p) - 2.0 if p != "nan" else math.nan for p in passages]


def test_score_batches_keeps_order_and_clamps():
    evaluator = _LengthEvaluator()
    scores = evaluator.score("q", ["a", "aa", "aaa", "aaaaaa", "nan"], batch_size=2)
    assert evaluator.batches == [2, 2, 1]
    assert scores == [-1.0, 0.0, 1.0, 1.0, -1.0]
    assert evaluator.score("q", []) == []
    with pytest.raises(ValueError, match="batch_size"):
        evaluator.score("q", ["a"], batch_size=0)


def test_model_source_checks_local_paths_before_the_hub(tmp_path):
    assert resolve_model_source(str(tmp_path), "t5") == str(tmp_path)
    assert resolve_model_source("org/some-model", "t5") == "org/some-model"
    with pytest.raises(FileNotFoundError, match="not found"):
        resolve_model_source(str(tmp_path / "missing" / "model"), "t5")
    with pytest.raises(FileNotFoundError, match="not found"):
        resolve_model_source("./relative/missing", "t5")


# --- tiny real models ------------------------------------------------------------------------------------------


def _tiny_tokenizer(specials: list[str], template: dict):
    """A WordLevel tokenizer trained offline on SENTENCES, with the model family's special-token template."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordLevel(unk_token=specials[1]))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(SENTENCES * 3, trainers.WordLevelTrainer(special_tokens=specials))
    tokenizer.post_processor = processors.TemplateProcessing(
        single=template["single"], pair=template["pair"],
        special_tokens=[(t, tokenizer.token_to_id(t)) for t in template["tokens"]],
    )
    return tokenizer


@pytest.fixture(scope="module")
def tiny_t5_dir(tmp_path_factory) -> Path:
    import torch
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-t5")
    tokenizer = _tiny_tokenizer(
        ["<pad>", "<unk>", "</s>"], {"single": "$A </s>", "pair": "$A </s> $B </s>", "tokens": ["</s>"]}
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", unk_token="<unk>", eos_token="</s>",
                    model_max_length=24)
    torch.manual_seed(0)
    config = T5Config(vocab_size=fast.vocab_size, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
                      num_heads=2, pad_token_id=0, eos_token_id=fast.eos_token_id, decoder_start_token_id=0,
                      num_labels=1)
    T5ForSequenceClassification(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_cross_encoder_dir(tmp_path_factory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-ce")
    tokenizer = _tiny_tokenizer(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]"],
        {"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] $B:1 [SEP]:1", "tokens": ["[CLS]", "[SEP]"]}
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                    sep_token="[SEP]", model_max_length=32)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=fast.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, num_labels=1)
    model = BertForSequenceClassification(config)
    with torch.no_grad():  # spread the logits so scores differ visibly between passages
        model.classifier.weight.mul_(20.0)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def _check_backend(evaluator: RelevanceEvaluator) -> None:
    scores = evaluator.score(QUESTION, PASSAGES, batch_size=16)
    assert len(scores) == len(PASSAGES)
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert len({round(s, 6) for s in scores}) > 1, "scores should depend on the passage"
    singles = [evaluator.score(QUESTION, [p])[0] for p in PASSAGES]
    assert np.allclose(scores, singles, atol=1e-5), "batching must not change scores"
    assert evaluator.score(QUESTION, PASSAGES, batch_size=3) == pytest.approx(scores, abs=1e-5)
    long_score = evaluator.score(QUESTION, [LONG_PASSAGE])[0]
    longer_score = evaluator.score(QUESTION, [LONG_PASSAGE + " the river the bridge the harbour"])[0]
    assert long_score == pytest.approx(longer_score, abs=1e-6), "text past max length must be truncated away"


def test_t5_evaluator_loads_a_local_folder_and_scores(tiny_t5_dir):
    from evaluators.t5 import T5Evaluator

    evaluator = T5Evaluator(str(tiny_t5_dir))
    assert evaluator.max_length == 24
    _check_backend(evaluator)


def test_t5_score_is_the_clamped_regression_output(tiny_t5_dir):
    import torch

    from evaluators.t5 import T5Evaluator

    evaluator = T5Evaluator(str(tiny_t5_dir))
    head = evaluator.model.classification_head.out_proj
    with torch.no_grad():
        head.weight.zero_()
        head.bias.fill_(0.37)
        assert evaluator.score(QUESTION, PASSAGES[:2]) == pytest.approx([0.37, 0.37])
        head.bias.fill_(3.0)
        assert evaluator.score(QUESTION, PASSAGES[:2]) == [1.0, 1.0]


def test_t5_passage_containing_eos_text_still_scores(tiny_t5_dir):
    from evaluators.t5 import T5Evaluator

    evaluator = T5Evaluator(str(tiny_t5_dir))
    scores = evaluator.score(QUESTION, ["the river </s> the bridge </s>", SENTENCES[1]])
    assert len(scores) == 2


def test_cross_encoder_evaluator_loads_a_local_folder_and_scores(tiny_cross_encoder_dir):
    from evaluators.cross_encoder import CrossEncoderEvaluator

    evaluator = CrossEncoderEvaluator(str(tiny_cross_encoder_dir))
    assert evaluator.max_length == 32
    _check_backend(evaluator)


def test_cross_encoder_maps_logits_through_a_sigmoid(tiny_cross_encoder_dir):
    import torch

    from evaluators.cross_encoder import CrossEncoderEvaluator

    evaluator = CrossEncoderEvaluator(str(tiny_cross_encoder_dir))
    classifier = evaluator.model[0].model.classifier
    with torch.no_grad():
        classifier.weight.zero_()
        classifier.bias.fill_(1.0)
    expected = 2.0 / (1.0 + math.exp(-1.0)) - 1.0
    assert evaluator.score(QUESTION, PASSAGES[:2]) == pytest.approx([expected, expected], abs=1e-6)


@pytest.mark.parametrize("kind", ["t5", "cross-encoder"])
def test_missing_model_folder_is_a_clear_error(tmp_path, kind):
    clear_evaluator_cache()
    with pytest.raises(FileNotFoundError, match="not found"):
        load_evaluator(f"{kind}:{tmp_path / 'no' / 'such-model'}")


def test_unreachable_hub_id_is_a_clear_error(monkeypatch):
    from evaluators.t5 import T5Evaluator

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OSError, match="could not load the t5 evaluator"):
        T5Evaluator("cragraph-tests/model-that-does-not-exist")


# --- LLM grader ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"relevance": 2}', 2),
        ('  {"relevance": 0, "reason": "off topic"}\n', 0),
        ('```json\n{"relevance": 1}\n```', 1),
        ('```\n{"relevance": 2}\n```', 2),
        ("2", None),
        ('{"relevance": 3}', None),
        ('{"relevance": true}', None),
        ('{"relevance": "2"}', None),
        ('Sure! {"relevance": 2}', None),
        ("garbage", None),
    ],
)
def test_parse_relevance_is_strict(reply, expected):
    assert parse_relevance(reply) == expected


def test_llm_grader_maps_grades_and_counts_unparsed():
    model = ScriptedChatModel(responses=['{"relevance": 2}', '```json\n{"relevance": 1}\n```', "garbage",
                                         '{"relevance": 0}'])
    evaluator = LLMGraderEvaluator(model)
    scores = evaluator.score("Кто основал институт?", ["p-good", "p-part", "p-bad", "p-off"], batch_size=3)
    assert scores == [1.0, 0.0, -1.0, -1.0]
    assert evaluator.unparsed == 1 and evaluator.graded == 4
    assert "Кто основал институт?" in model.prompts[0] and "p-good" in model.prompts[0]
    assert "p-off" in model.prompts[3]
    system = model.calls[0][0].content
    assert "Russian" in system and "Chinese" in system and '"relevance"' in system
    evaluator.reset_counters()
    assert evaluator.unparsed == 0 and evaluator.graded == 0


def test_llm_grader_truncates_long_passages():
    model = ScriptedChatModel(responses=['{"relevance": 1}'])
    LLMGraderEvaluator(model, max_passage_chars=50).score("q", ["x" * 500])
    assert "x" * 50 in model.prompts[0] and "x" * 51 not in model.prompts[0]


# --- cosine --------------------------------------------------------------------------------------------------


class _FixedEmbedder:
    """Vectors chosen so each passage has a known cosine with the query."""

    name, dim = "fixed", 2

    def __init__(self, cosines: dict[str, float]) -> None:
        self.cosines = cosines

    def embed_queries(self, texts, batch_size=32, progress=False):
        return np.array([[1.0, 0.0]] * len(texts), dtype=np.float32)

    def embed_passages(self, texts, batch_size=32, progress=False):
        return np.array([[c, math.sqrt(1 - c * c)] for c in (self.cosines[t] for t in texts)], dtype=np.float32)


def test_cosine_evaluator_maps_calibration_points_to_the_ends():
    embedder = _FixedEmbedder({"low": 0.70, "mid": 0.80, "high": 0.90, "below": 0.5, "above": 0.99})
    evaluator = CosineEvaluator("fixed", cos_lo=0.70, cos_hi=0.90, embedder=embedder)
    scores = evaluator.score("q", ["low", "mid", "high", "below", "above"])
    assert scores == pytest.approx([-1.0, 0.0, 1.0, -1.0, 1.0], abs=1e-5)


def test_cosine_defaults_are_measured_for_e5_and_checked():
    lo, hi = default_calibration("e5-small")
    assert (lo, hi) != UNCALIBRATED and 0.5 < lo < hi < 1.0  # e5 cosines are compressed
    assert default_calibration("intfloat/multilingual-e5-small") == (lo, hi)
    assert default_calibration("some/other-model") == UNCALIBRATED
    with pytest.raises(ValueError, match="cos_hi"):
        CosineEvaluator("e5-small", cos_lo=0.9, cos_hi=0.8)


def test_calibration_points_are_percentiles():
    positives = np.linspace(0.8, 0.9, 101)
    negatives = np.linspace(0.6, 0.85, 101)
    lo, hi = calibration_points(positives, negatives)
    assert lo == pytest.approx(0.6125) and hi == pytest.approx(0.895)
    assert map_cosines(np.array([lo, hi]), lo, hi).tolist() == pytest.approx([-1.0, 1.0])
    with pytest.raises(ValueError):
        calibration_points([], negatives)


# --- registry ------------------------------------------------------------------------------------------------


def test_registry_builds_and_caches_each_kind(tiny_t5_dir, tiny_cross_encoder_dir):
    from evaluators.cross_encoder import CrossEncoderEvaluator
    from evaluators.t5 import T5Evaluator

    clear_evaluator_cache()
    from evaluators.embedded import EmbeddedEvaluator

    embedded = load_evaluator("embedded")
    assert EMBEDDED_EVALUATOR_SPEC == "head:default"
    assert isinstance(embedded, EmbeddedEvaluator) and embedded is load_evaluator("head:default")
    assert load_evaluator("cosine") is load_evaluator("cosine")
    assert load_evaluator("cosine:minilm").embedder_name == "minilm"
    assert isinstance(load_evaluator(f"t5:{tiny_t5_dir}"), T5Evaluator)
    assert load_evaluator(f"t5:{tiny_t5_dir}") is load_evaluator(f" t5:{tiny_t5_dir} ")
    assert isinstance(load_evaluator(f"cross-encoder:{tiny_cross_encoder_dir}"), CrossEncoderEvaluator)
    grader = load_evaluator("llm:embedded")
    assert isinstance(grader, LLMGraderEvaluator) and grader.model.max_new_tokens <= 32


@pytest.mark.parametrize("spec", ["bm25", "t5:", "llm:", "cross-encoder"])
def test_registry_rejects_unknown_specs_listing_the_forms(spec):
    with pytest.raises(ValueError) as info:
        load_evaluator(spec)
    assert all(form in str(info.value) for form in ACCEPTED_FORMS)


def test_cosine_evaluator_embeds_each_passage_once_and_keeps_scores_identical():
    import numpy as np

    from evaluators.cosine import CosineEvaluator

    class CountingEmbedder:
        def __init__(self):
            self.embedded: list[str] = []

        def embed_queries(self, texts):
            return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

        def embed_passages(self, texts, batch_size=32):
            self.embedded += list(texts)
            return np.array([[1.0, 0.0] if "a" in t else [0.0, 1.0] for t in texts], dtype=np.float32)

    embedder = CountingEmbedder()
    evaluator = CosineEvaluator("e5-small", embedder=embedder)
    first = evaluator.score("q", ["alpha", "beta", "alpha"])
    again = evaluator.score("q", ["beta", "gamma"])
    assert embedder.embedded == ["alpha", "beta", "gamma"]
    assert first[1] == again[0] and first[0] == first[2]
    assert evaluator.score("q", []) == []


def test_a_registered_evaluator_kind_is_built_from_its_spec(monkeypatch):
    import functools

    from evaluators import registry

    class Constant(RelevanceEvaluator):
        name = "constant"

        def __init__(self, value: float):
            self.value = value

        def _score_batch(self, question, passages):
            return [self.value] * len(passages)

    monkeypatch.setattr(registry, "EVALUATOR_FACTORIES", dict(registry.EVALUATOR_FACTORIES))
    monkeypatch.setattr(registry, "_build", functools.cache(registry._build.__wrapped__))
    registry.register_evaluator("constant", lambda target: Constant(float(target)))
    evaluator = registry.load_evaluator("constant:0.25")
    assert evaluator.score("q", ["a", "b"]) == [0.25, 0.25]
    assert registry.load_evaluator("constant:0.25") is evaluator
    with pytest.raises(ValueError, match="unknown evaluator spec"):
        registry.load_evaluator("nothing:here")
