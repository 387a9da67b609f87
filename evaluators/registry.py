"""Evaluators by spec string (the form settings and the CLI use), built once per process."""

from __future__ import annotations

import functools
from collections.abc import Callable

from evaluators.base import RelevanceEvaluator

# What `embedded` means: the trained e5-small feature head shipped in evaluators/weights (see its MODEL_CARD.md),
# which beats the calibrated e5 cosine (`cosine`) on every measured set; change it here only.
EMBEDDED_EVALUATOR_SPEC = "head:default"
# The embedded chat model writes one short JSON object when grading; cap its generation accordingly.
EMBEDDED_GRADER_MAX_NEW_TOKENS = 24

ACCEPTED_FORMS = (
    "embedded",
    "cosine",
    "cosine:<embedder>",
    "head:default",
    "head:<trained head .npz from `python -m cragraph_lab train-evaluator`>",
    "t5:<hugging face id or local folder>",
    "cross-encoder:<hugging face id or local folder>",
    "llm:embedded",
    "llm:<provider:model>",
)


def load_evaluator(spec: str = "embedded") -> RelevanceEvaluator:
    """The evaluator for `spec` (see ACCEPTED_FORMS); one instance per distinct spec per process."""
    normalized = (spec or "").strip()
    if normalized.lower() == "embedded":
        normalized = EMBEDDED_EVALUATOR_SPEC
    return _build(normalized)


def clear_evaluator_cache() -> None:
    _build.cache_clear()


def _cosine(target: str) -> RelevanceEvaluator:
    from evaluators.cosine import CosineEvaluator

    return CosineEvaluator(target or "e5-small")


def _head(target: str) -> RelevanceEvaluator:
    from evaluators.embedded import DEFAULT_WEIGHTS, EmbeddedEvaluator

    return EmbeddedEvaluator(DEFAULT_WEIGHTS if target.lower() == "default" else target)


def _t5(target: str) -> RelevanceEvaluator:
    from evaluators.t5 import T5Evaluator

    return T5Evaluator(target)


def _cross_encoder(target: str) -> RelevanceEvaluator:
    from evaluators.cross_encoder import CrossEncoderEvaluator

    return CrossEncoderEvaluator(target)


def _llm(target: str) -> RelevanceEvaluator:
    from evaluators.llm_grader import LLMGraderEvaluator

    if target.lower() in ("embedded", "smollm2"):
        from models.chat import EmbeddedChatModel

        model = EmbeddedChatModel(max_new_tokens=EMBEDDED_GRADER_MAX_NEW_TOKENS)
        return LLMGraderEvaluator(model, name=f"llm:{target}")
    from models.chat import load_chat_model

    return LLMGraderEvaluator(load_chat_model(target), name=f"llm:{target}", max_concurrency=4)


# kind -> factory(target) for specs "kind:target"; `register_evaluator` adds one (a user's own scorer, a test's).
EVALUATOR_FACTORIES: dict[str, Callable[[str], RelevanceEvaluator]] = {
    "cosine": _cosine, "head": _head, "t5": _t5, "cross-encoder": _cross_encoder, "llm": _llm,
}
_NEEDS_TARGET = frozenset({"head", "t5", "cross-encoder", "llm"})


def register_evaluator(kind: str, factory: Callable[[str], RelevanceEvaluator]) -> None:
    """Make `kind:<target>` specs build with `factory(target)` (replacing any earlier factory of that kind)."""
    EVALUATOR_FACTORIES[kind.strip().lower()] = factory
    clear_evaluator_cache()


@functools.cache
def _build(spec: str) -> RelevanceEvaluator:
    kind, _, target = spec.partition(":")
    kind, target = kind.strip().lower(), target.strip()
    factory = EVALUATOR_FACTORIES.get(kind)
    if factory is None or (kind in _NEEDS_TARGET and not target):
        raise ValueError(f"unknown evaluator spec {spec!r}; accepted forms: {', '.join(ACCEPTED_FORMS)}")
    return factory(target)
