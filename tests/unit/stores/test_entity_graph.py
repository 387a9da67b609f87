"""The entity-passage graph: its edges, the walk, persistence, and the bundle keeping it in step."""

import json

import numpy as np
import pytest

from stores.bundle import BundleError, IndexBundle
from stores.entity_graph import EntityGraph, WalkWeights, synonym_key
from tests.fixtures.graph import build_tiny_index

# Chunk rows 10..14. "bridge" links 10 to 11 through a rare shared entity; 12 shares only a hub; 13 is alone.
ROWS = [10, 11, 12, 13, 14]
ENTITIES = [["Ada Lovelace", "London"], ["Ada Lovelace", "Analytical Engine"], ["London"], ["Kyoto"],
            ["The Beatles"]]


def _unit(vectors):
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def graph():
    vectors = _unit([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0, 1], [1, 1, 1]])
    return EntityGraph.build(ROWS, ENTITIES, vectors)


def test_edges_mentions_neighbours_and_synonyms(graph):
    assert graph.entities == sorted({"ada lovelace", "london", "analytical engine", "kyoto", "the beatles"})
    assert graph.edge_counts["mention"] == 7
    # 12 and 13 are each other's nearest vectors (cosine ~0.99 >= KNN_MIN_COSINE); nothing else is that close
    assert graph.edge_counts["neighbour"] == 1
    assert graph.entity_ids(["Beatles"]) == graph.entity_ids(["the Beatles"]) == [graph.entities.index("the beatles")]
    assert graph.entity_ids(["Nobody"]) == []
    assert synonym_key("The Beatles'") == synonym_key("beatles") == "beatles"


def test_walk_reaches_the_passage_behind_a_shared_rare_entity(graph):
    rows, scores = graph.walk({10: 1.0}, [], damping=0.8)
    assert rows[0] == 10 and list(rows).index(11) < list(rows).index(12)
    assert 13 not in rows and 14 not in rows, "no path from the seed: no mass"
    assert np.all(np.diff(scores) <= 0)


def test_entity_seeds_start_the_walk_without_any_passage(graph):
    rows, _ = graph.walk({}, graph.entity_ids(["Analytical Engine"]), damping=0.5)
    assert rows[0] == 11


def test_rows_outside_allowed_neither_rank_nor_pass_mass(graph):
    rows, _ = graph.walk({10: 1.0}, [], damping=0.8, allowed=np.asarray([10, 12]))
    assert set(rows) <= {10, 12}
    rows, _ = graph.walk({11: 1.0}, [], damping=0.8, allowed=np.asarray([12]))
    assert len(rows) == 0, "a seed the caller may not see starts nothing"


def test_neighbour_edges_count_only_when_weighted(graph):
    unweighted, _ = graph.walk({12: 1.0}, [], damping=0.8)
    weighted, _ = graph.walk({12: 1.0}, [], damping=0.8, weights=WalkWeights(neighbour=1.0))
    assert 13 not in unweighted and 13 in weighted


def test_save_and_load_round_trip(graph, tmp_path):
    graph.save(tmp_path)
    loaded = EntityGraph.load(tmp_path)
    assert loaded.entities == graph.entities and list(loaded.rows) == ROWS
    assert loaded.edge_counts == graph.edge_counts
    assert np.allclose(loaded.walk({10: 1.0}, [], 0.8)[1], graph.walk({10: 1.0}, [], 0.8)[1])


DOCS = [
    {"id": "ada", "title": "Ada Lovelace", "text": "Ada Lovelace wrote about the Analytical Engine in London."},
    {"id": "engine", "title": "Analytical Engine", "text": "The Analytical Engine was designed by Charles Babbage."},
    {"id": "kyoto", "title": "Kyoto", "text": "Kyoto was the capital of Japan for a thousand years."},
]


@pytest.fixture
def bundle(tmp_path, tiny_embedder_dir):
    return IndexBundle.open(build_tiny_index(tmp_path, tiny_embedder_dir, DOCS))


def _graph_docs(bundle):
    return sorted(c.doc_id for c in bundle.docstore.get(bundle.graph.rows.tolist()))


def test_bundle_builds_the_graph_and_keeps_it_in_step_on_add_and_delete(bundle, tmp_path):
    assert "graph/graph.npz" in bundle.manifest["files"]
    assert bundle.manifest["graph"]["nodes"]["chunks"] == 3 and _graph_docs(bundle) == ["ada", "engine", "kyoto"]
    bundle.add(documents=[])  # nothing new, graph present: no rewrite
    bundle.delete(["engine"])
    assert _graph_docs(bundle) == ["ada", "kyoto"]
    assert "analytical engine" in bundle.graph.entities, "still named by ada"
    assert "charles babbage" not in bundle.graph.entities, "named only by the deleted document"
    reopened = IndexBundle.open(bundle.path)
    assert _graph_docs(reopened) == ["ada", "kyoto"]


def test_a_bundle_from_before_the_graph_gets_it_on_the_next_add(bundle):
    path = bundle.path
    bundle.close()
    manifest = json.loads((path / "manifest.json").read_text())
    del manifest["graph"], manifest["files"]["graph/graph.npz"]
    (path / "graph" / "graph.npz").unlink()
    (path / "manifest.json").write_text(json.dumps(manifest))
    old = IndexBundle.open(path)
    assert old.graph is None
    report = old.add(documents=[])
    assert report.graph_backfilled and "graph built" in report.summary()
    assert old.graph is not None and len(old.graph.rows) == 3


def test_a_damaged_graph_file_is_refused_by_its_checksum(bundle):
    path = bundle.path
    bundle.close()
    with open(path / "graph" / "graph.npz", "r+b") as handle:
        handle.seek(100)
        handle.write(b"\x00\x01\x02\x03")
    with pytest.raises(BundleError, match="graph"):
        IndexBundle.open(path)


def test_the_index_s_own_neighbour_search_gives_the_exact_edges_on_a_small_set():
    from stores.dense import DenseIndex
    from stores.entity_graph import KNN_MIN_COSINE, nearest_neighbours, neighbour_matrix

    vectors = _unit(np.random.default_rng(1).normal(size=(40, 8)))
    vectors[1] = _unit([vectors[0] + 0.05])[0]  # one pair surely above the cosine floor
    ids = list(range(100, 140))
    hnsw = DenseIndex(8, hnsw_threshold=10)
    hnsw.add(ids, vectors)
    assert hnsw.kind == "hnsw"
    order = ids[::-1]  # positions follow the order asked for, not the insertion order
    approximate = neighbour_matrix(*hnsw.neighbour_lists(order, 5), KNN_MIN_COSINE)
    exact = nearest_neighbours(vectors[::-1].copy(), 5, KNN_MIN_COSINE)
    assert approximate.nnz == exact.nnz > 0
    assert np.allclose(approximate.toarray(), exact.toarray(), atol=1e-5)
    with pytest.raises(ValueError, match="every stored id"):
        hnsw.neighbour_lists(ids[:5], 5)
