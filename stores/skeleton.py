"""Skeleton indexing: full NER only for the most central share of chunks, keyword linking for the rest.

NER is the costly part of entity extraction on a large corpus. PageRank over the chunks' nearest-neighbour graph
(the same neighbour edges as stores.entity_graph) ranks chunks by how many similar chunks point at them; the top
`share` get the NER backends, and every other chunk is linked to the entities that vocabulary (plus the index's
existing entities) holds by exact word n-gram match. A chunk that names only entities no central chunk names
gets none: the price of the saving, measured in the README.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from stores.entity_graph import KNN, nearest_neighbours
from stores.entity_index import entity_key
from stores.ner import chunk_entities
from stores.scripts import HAN
from stores.types import Chunk

MAX_NGRAM = 6
"""Longest entity name, in words, that keyword linking looks for."""
_WORD_SPLIT = str.maketrans({c: " " for c in ".,;:!?()[]{}\"'«»“”„`|/\\"})


def skeleton_entities(chunks: Sequence[Chunk], vectors: np.ndarray, share: float,
                      known: Iterable[str] = (), progress: bool = False) -> list[list[str]]:
    """Entities per chunk: NER on the central `share`, keyword links to the found and `known` names elsewhere."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"ner_share must be in (0, 1], got {share}")
    if share >= 1.0 or len(chunks) < 2:
        return chunk_entities(chunks, progress=progress)
    central = central_positions(vectors, share)
    found: list[list[str]] = [[] for _ in chunks]
    for position, names in zip(central, chunk_entities([chunks[i] for i in central], progress=progress),
                               strict=True):
        found[position] = names
    vocabulary = {entity_key(n) for names in found for n in names} | {entity_key(n) for n in known}
    vocabulary.discard("")
    chosen = set(central.tolist())
    for position, chunk in enumerate(chunks):
        if position not in chosen:
            found[position] = keyword_entities(chunk.passage, vocabulary)
    return found


def central_positions(vectors: np.ndarray, share: float, damping: float = 0.85, iterations: int = 30) -> np.ndarray:
    """Positions of the ceil(share x n) chunks with the highest PageRank on the nearest-neighbour graph."""
    count = len(vectors)
    graph = nearest_neighbours(np.asarray(vectors, dtype=np.float32), KNN, min_cosine=0.0)
    degree = np.asarray(graph.sum(axis=1)).ravel()
    degree[degree == 0] = 1.0
    walk = (graph.multiply(1.0 / degree[:, None])).T.tocsr()
    rank = np.full(count, 1.0 / count)
    for _ in range(iterations):
        rank = (1.0 - damping) / count + damping * (walk @ rank)
    keep = max(1, int(np.ceil(share * count)))
    return np.sort(np.argsort(-rank, kind="stable")[:keep])


def keyword_entities(text: str, vocabulary: set[str]) -> list[str]:
    """The vocabulary's names that occur in `text` as whole words (longest match first, no overlaps); names in
    Han script, which is written without spaces, as substrings."""
    key = entity_key(text)
    han = [name for name in vocabulary if HAN.search(name) and name in key] if HAN.search(key) else []
    words = entity_key(text.translate(_WORD_SPLIT)).split()
    names: list[str] = []
    position = 0
    while position < len(words):
        for size in range(min(MAX_NGRAM, len(words) - position), 0, -1):
            candidate = " ".join(words[position:position + size])
            if candidate in vocabulary:
                names.append(candidate)
                position += size
                break
        else:
            position += 1
    return list(dict.fromkeys([*names, *han]))
