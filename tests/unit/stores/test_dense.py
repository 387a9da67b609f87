import numpy as np
import pytest

from stores.dense import DenseIndex


def _vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_exact_search_matches_brute_force():
    vectors = _vectors(200)
    index = DenseIndex(16)
    index.add(range(100, 300), vectors)
    query = vectors[17]
    ids, scores = index.search(query, 5)
    expected = np.argsort(-(vectors @ query))[:5] + 100
    assert ids.tolist() == expected.tolist()
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert index.kind == "flat"


def test_allowed_restricts_results():
    vectors = _vectors(50)
    index = DenseIndex(16)
    index.add(range(50), vectors)
    ids, _ = index.search(vectors[3], 10, allowed=np.array([7, 9, 11]))
    assert set(ids.tolist()) == {7, 9, 11}
    assert index.search(vectors[3], 10, allowed=np.array([999]))[0].size == 0


def test_hnsw_above_threshold_finds_itself_and_supports_delete(tmp_path):
    vectors = _vectors(300)
    index = DenseIndex(16, hnsw_threshold=100)
    index.add(range(300), vectors)
    assert index.kind == "hnsw"
    hits = sum(index.search(vectors[i], 1)[0][0] == i for i in range(0, 300, 10))
    assert hits >= 29
    assert index.delete([5, 6, 999]) == 2
    assert 5 not in index.search(vectors[5], 5)[0].tolist()
    index.save(tmp_path)
    loaded = DenseIndex.load(tmp_path, 16, hnsw_threshold=100)
    assert len(loaded) == 298
    assert loaded.search(vectors[10], 1)[0][0] == 10
    assert np.allclose(loaded.vectors_for([10, 11]), vectors[[10, 11]])


def test_duplicate_ids_are_refused():
    index = DenseIndex(16)
    index.add([1], _vectors(1))
    with pytest.raises(ValueError):
        index.add([1], _vectors(1))
