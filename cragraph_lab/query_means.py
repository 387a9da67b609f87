"""`python -m cragraph_lab bench query-means`: the per-language mean question vectors that
cross-lingual search shifts by.

A multilingual embedder places a question partly by its language: Chinese questions share a direction that
English passages lack. The mean over questions that say the same thing in every language (XQuAD's parallel
questions, training half only: `training_data.xquad_part`) differs between two languages by that direction
alone, since the topics are the same on both sides; rag/retrieval/crosslingual.py subtracts the question's
language mean and adds the index's. Written as float32 arrays named by language code in an .npz file.

Chinese is written in two scripts that the embedder tokenizes apart, and XQuAD's Chinese is simplified: its
questions count once as written and once converted to traditional characters (OpenCC), so the Chinese mean
stands for both scripts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cragraph_lab.training_data import XQUAD, XQUAD_LANGUAGES, default_data_root, xquad_subset
from rag.retrieval.crosslingual import means_file
from stores.chinese_script import traditional

SOURCE = "SOURCE.md"


def parallel_questions(data_root: Path) -> dict[str, list[str]]:
    """Language -> the training half's questions present in every language, in one id order."""
    by_language = {language: {q["id"]: q["question"] for q in xquad_subset(data_root / XQUAD / language, "train")[0]}
                   for language in XQUAD_LANGUAGES}
    shared = sorted(set.intersection(*(set(found) for found in by_language.values())))
    if not shared:
        raise ValueError(f"no question id is shared by the XQuAD languages under {data_root / XQUAD}")
    return {language: [found[i] for i in shared] for language, found in by_language.items()}


def _both_scripts(chinese: list[str]) -> list[str]:
    """The simplified questions and their traditional-character forms."""
    return [*chinese, *(traditional(text) for text in chinese)]


def write_query_means(out: Path, embedder: str = "e5-small", data_root: Path | None = None) -> Path:
    """Embed the parallel training questions with `embedder`, write its means file (the name cross-lingual search
    looks up) and a SOURCE.md into OUT."""
    from models.embedder import load_embedder

    data_root = data_root or default_data_root()
    questions = parallel_questions(data_root)
    model = load_embedder(embedder)
    means = {language: np.asarray(model.embed_queries(_both_scripts(texts) if language == "zh" else texts),
                                  dtype=np.float32).mean(axis=0)
             for language, texts in questions.items()}
    out.mkdir(parents=True, exist_ok=True)
    path = means_file(out, embedder)
    np.savez(path, **means)
    count = len(next(iter(questions.values())))
    (out / SOURCE).write_text(
        "# Mean question vectors per language\n\n"
        f"`{path.name}`: for each of {', '.join(questions)}, the mean `query: ` vector of the {count} XQuAD "
        f"questions of the training half (`{XQUAD}`, passages whose `xquad_part` is `train`) that exist in every "
        "one of these languages: the same questions in each language, so two means differ by language, not topic. "
        "The Chinese mean counts each question twice, as written (simplified) and converted to traditional "
        "characters with OpenCC (s2t). "
        "Used by rag/retrieval/crosslingual.py. Reproduce: `python -m cragraph_lab bench query-means --out "
        "rag/retrieval/query_means`.\n\n" + json.dumps({"embedder": embedder, "questions": count}) + "\n",
        encoding="utf-8")
    return path
