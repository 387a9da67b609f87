"""`python -m cragraph_lab bench query-means`: parallel questions only (the ids every language has), the Chinese mean
over both scripts, one .npz the cross-lingual search reads back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cragraph_lab.query_means import _both_scripts, parallel_questions, write_query_means
from cragraph_lab.training_data import XQUAD, xquad_part
from models.embedder import load_embedder
from rag.retrieval import crosslingual as module

QUESTIONS = {
    "en": ["Who built the bridge?", "Which river flows past?", "Only in English?"],
    "ru": ["Кто построил мост?", "Какая река течёт мимо?"],
    "zh": ["谁建造了这座桥？", "哪条河流经这里？"],
}


def _write_xquad(root: Path) -> None:
    # passage numbers whose hash puts them in the training half
    numbers = [n for n in range(200) if xquad_part(f"xqen-{n:06d}") == "train"][:3]
    for language, questions in QUESTIONS.items():
        folder = root / XQUAD / language
        folder.mkdir(parents=True)
        corpus = [{"id": f"xq{language}-{n:06d}", "title": "", "text": "passage"} for n in numbers]
        rows = [{"id": f"q{i}", "question": q, "answers": ["x"], "supporting_ids": [f"xq{language}-{numbers[i]:06d}"]}
                for i, q in enumerate(questions)]
        (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus), encoding="utf-8")
        (folder / "questions.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                                encoding="utf-8")


def test_only_questions_every_language_has_count_and_chinese_counts_in_both_scripts(tmp_path, tiny_embedder_dir,
                                                                                    monkeypatch):
    _write_xquad(tmp_path / "data")
    found = parallel_questions(tmp_path / "data")
    assert found == {language: questions[:2] for language, questions in QUESTIONS.items()}
    assert _both_scripts(["谁建造了这座桥？"]) == ["谁建造了这座桥？", "誰建造了這座橋？"]

    path = write_query_means(tmp_path / "means", str(tiny_embedder_dir), tmp_path / "data")
    assert path.name == str(tiny_embedder_dir).replace("/", "__") + ".npz"
    model = load_embedder(str(tiny_embedder_dir))
    with np.load(path) as means:
        assert sorted(means.files) == ["en", "ru", "zh"]
        assert np.allclose(means["ru"], model.embed_queries(QUESTIONS["ru"]).mean(axis=0), atol=1e-6)
        assert np.allclose(means["zh"], model.embed_queries(_both_scripts(QUESTIONS["zh"])).mean(axis=0), atol=1e-6)
    assert '"questions": 2' in (tmp_path / "means" / "SOURCE.md").read_text(encoding="utf-8")
    monkeypatch.setattr(module, "QUERY_MEANS", tmp_path / "means")
    module.query_means.cache_clear()
    try:
        assert sorted(module.query_means(str(tiny_embedder_dir))) == ["en", "ru", "zh"]
    finally:
        module.query_means.cache_clear()
