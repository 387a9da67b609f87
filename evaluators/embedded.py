"""The embedded relevance evaluator: features from multilingual-e5-small and a small trained head.

Why not a cross-encoder: fine-tuning e5-small as one did not fit this CPU (hours per 20k pairs, ~0.8 s per
10 passages). Here each passage costs one e5 vector, which for an indexed chunk is already in the embedding
cache (the bundle stored it there by content hash), plus word-piece lookups and a few numpy operations; the
head (evaluators/head.py) was trained by `python -m cragraph_lab train-evaluator` and ships in evaluators/weights/.

Scores are 2 p - 1 with p the head's probability that the passage is relevant (a gold passage) for the
question, so 0 means even odds. The head sees the whole candidate list at once (some features compare a passage
with the other candidates), so `score` scores all passages together, whatever `batch_size` says.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.base import RelevanceEvaluator, lazy_embedder
from evaluators.features import FEATURE_NAMES, StaticPieces, list_features
from evaluators.head import MLPHead
from stores.chinese_script import simplified
from stores.text import language_of, script_of

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
DEFAULT_WEIGHTS = WEIGHTS_DIR / "embedded-e5-small-v1.npz"
CROSSLINGUAL_WEIGHTS = WEIGHTS_DIR / "embedded-e5-small-crosslingual-v1.npz"
"""The head for a question and a passage in different languages and scripts (`python -m cragraph_lab train-evaluator
--crosslingual`): the main head, trained on same-language pairs, leans on word overlap that such a pair cannot
have, and grades it irrelevant."""
_VECTOR_MEMO_SIZE = 4096
BACKGROUND = (
    "Paper sizes. The A series of paper sizes is defined so that each size is half of the one before it, cut across "
    "its longer side.",
    "Форматы бумаги. Форматы серии A устроены так, что каждый следующий вдвое меньше предыдущего: лист делят поперёк "
    "длинной стороны.",
    "纸张尺寸。A系列纸张的每一个尺寸都是前一个尺寸沿长边对折后的一半。",
)
"""Off-topic passages (en, ru, zh) a list of one is scored beside, then dropped: the head's features compare a
passage with the rest of its list, so a relevant passage with no list to stand out from often reads as irrelevant
(measured in the README, "Relevance evaluators")."""


class RelevanceFeatures:
    """Computes the head's input rows: e5 vectors (memo, embedding cache, model) and e5 word pieces."""

    def __init__(self, embedder_name: str = "e5-small", embedder: Any = None,
                 use_embedding_cache: bool = True) -> None:
        self.embedder_name = embedder_name
        self.use_embedding_cache = use_embedding_cache
        self._embedder: Any = embedder
        self._pieces: StaticPieces | None = None
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Any:
        with self._lock:
            self._embedder = lazy_embedder(self._embedder, self.embedder_name)
            return self._embedder

    @property
    def pieces(self) -> StaticPieces:
        embedder = self.embedder
        with self._lock:
            if self._pieces is None:
                self._pieces = _static_pieces(embedder)
            return self._pieces

    def passage_vectors(self, passages: Sequence[str]) -> np.ndarray:
        """e5 passage vectors: this process's memo, then the shared embedding cache (read only, so strips and
        web passages do not fill it), then the model for whatever is left."""
        from stores.embed_cache import content_hash, model_key, shared_cache

        embedder = self.embedder
        hashes = [content_hash(p) for p in passages]
        with self._lock:
            found = {h: self._memo[h] for h in hashes if h in self._memo}
        missing = [h for h in dict.fromkeys(hashes) if h not in found]
        if missing and self.use_embedding_cache:
            found.update(shared_cache().lookup(model_key(embedder), missing))
            missing = [h for h in missing if h not in found]
        if missing:
            text_of = dict(zip(hashes, passages, strict=True))
            vectors = embedder.embed_passages([text_of[h] for h in missing], batch_size=16)
            found.update(zip(missing, vectors, strict=True))
        with self._lock:
            for h in hashes:
                self._memo[h] = found[h]
                self._memo.move_to_end(h)
            while len(self._memo) > _VECTOR_MEMO_SIZE:
                self._memo.popitem(last=False)
        if not passages:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([found[h] for h in hashes]).astype(np.float32)

    def query_vector(self, question: str) -> np.ndarray:
        """The question's e5 vector, memoized: grade and refine score the same question many times."""
        key = "q\x00" + question
        with self._lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
        vector = self.embedder.embed_queries([question])[0]
        with self._lock:
            self._memo[key] = vector
        return vector

    def features(self, question: str, passages: Sequence[str],
                 query_vector: np.ndarray | None = None) -> np.ndarray:
        """The head's input rows for one candidate list (see evaluators/features.py). The word-level features
        read Chinese folded to simplified, so a traditional question matches a simplified passage word for word
        (and the reverse); the vectors are the texts' own, as the index and the embedding cache hold them."""
        if query_vector is None:
            query_vector = self.query_vector(question)
        return list_features(simplified(question), [simplified(p) for p in passages], query_vector,
                             self.passage_vectors(passages), self.pieces)


def _static_pieces(embedder: Any) -> StaticPieces:
    """The word-piece table and tokenizer of `embedder`: from its sentence-transformers model, or, for the
    packaged e5-small on ONNX / OpenVINO, from the plain-torch e5 the reader reads when it is open, else from the
    folder (no sentence-transformers import, no model built; the table is a tensor's own memory, not a copy)."""
    from models.e5_parts import e5_pieces, serves_light

    if serves_light(embedder):
        return StaticPieces.from_parts(*e5_pieces())
    return StaticPieces.from_sentence_transformer(embedder.model)


class EmbeddedEvaluator(RelevanceEvaluator):
    """e5-small features + the trained MLP head; the embedder and word-piece table load on first use."""

    def __init__(self, weights: str | Path = DEFAULT_WEIGHTS, embedder_name: str = "e5-small",
                 embedder: Any = None, use_embedding_cache: bool = True,
                 crosslingual_weights: str | Path | None = CROSSLINGUAL_WEIGHTS) -> None:
        self.weights = Path(weights)
        self.head = _load_head(self.weights, "python -m cragraph_lab train-evaluator")
        self.crosslingual_head: MLPHead | None = None
        if crosslingual_weights is not None:
            self.crosslingual_head = _load_head(Path(crosslingual_weights),
                                                "python -m cragraph_lab train-evaluator --crosslingual")
        self.extractor = RelevanceFeatures(embedder_name, embedder, use_embedding_cache)
        self.name = "embedded"

    def features(self, question: str, passages: Sequence[str],
                 query_vector: np.ndarray | None = None) -> np.ndarray:
        return self.extractor.features(question, passages, query_vector)

    def score(self, question: str, passages: Sequence[str], batch_size: int = 16) -> list[float]:
        """One score in [-1, 1] per passage, the list scored together (a list of one beside BACKGROUND);
        batch_size is accepted, not needed."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        items = list(passages)
        if not items:
            return []
        if len(items) == 1:
            return self._score_batch(question, [*items, *BACKGROUND])[:1]
        return self._score_batch(question, items)

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        """The main head's scores, and the cross-lingual head's for passages in another language and script than
        the question (features are computed over the whole list either way)."""
        rows = self.features(question, passages)
        scores = self.head.scores(rows)
        if self.crosslingual_head is not None:
            crossing = cross_lingual(question, passages)
            if crossing.any():
                scores[crossing] = self.crosslingual_head.scores(rows[crossing])
        return scores.tolist()


def cross_lingual(question: str, passages: Sequence[str]) -> np.ndarray:
    """Per passage: is it written in another script and another language than the question? Both, because a
    Chinese question full of English names ("Halvmere Open 2019的冠军是谁？") is mostly Latin letters, and language
    identification misreads a few short questions; only the pair of the two is a question across languages."""
    asked_script, asked_language = script_of(question), None
    crossing = np.zeros(len(passages), dtype=bool)
    if asked_script is None:  # a question without letters is in no language's script
        return crossing
    for index, text in enumerate(passages):
        if script_of(text) in (None, asked_script):
            continue
        asked_language = asked_language or language_of(question)
        crossing[index] = language_of(text) != asked_language
    return crossing


def _load_head(path: Path, command: str) -> MLPHead:
    if not path.is_file():
        raise FileNotFoundError(f"embedded evaluator weights not found: {path}; train them with `{command}`")
    return MLPHead.load(path, expected_features=FEATURE_NAMES)
