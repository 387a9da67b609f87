"""The graph retrieval mode over a real tiny bundle: the bridge passage rises, filters hold, no graph says so."""


import pytest

from cragraph.retrieval.graph_walk import GraphSettings, graph_rerank
from cragraph.retrieval.retriever import HybridRetriever
from stores.bundle import IndexBundle
from tests.fixtures.graph import build_tiny_index

DOCS = [
    {"id": "film", "title": "Silver Harbor", "text": "Silver Harbor is a 1998 film directed by Mara Quell.",
     "metadata": {"team": "a"}},
    {"id": "director", "title": "Mara Quell", "text": "Mara Quell was born in Tallinn and studied in Riga.",
     "metadata": {"team": "b"}},
    {"id": "harbor", "title": "Harbors", "text": "A harbor is a sheltered body of water for ships.",
     "metadata": {"team": "a"}},
    {"id": "tallinn", "title": "Tallinn", "text": "Tallinn is the capital of Estonia.", "metadata": {"team": "a"}},
]
QUESTION = "In which city was the director of Silver Harbor born?"


@pytest.fixture
def retriever(tmp_path, tiny_embedder_dir):
    return HybridRetriever(IndexBundle.open(build_tiny_index(tmp_path, tiny_embedder_dir, DOCS)))


def _film_first(retriever):
    """A hybrid list as a weak first pass would leave it: the film page, then noise."""
    hits = retriever.search(QUESTION, k=4)
    return sorted(hits, key=lambda h: h.chunk.doc_id != "film")


def test_the_walk_brings_the_bridge_passage_next_to_its_seed(retriever):
    walked = graph_rerank(retriever, QUESTION, "en", _film_first(retriever), k=4,
                          settings=GraphSettings(seed_passages=1))
    docs = [h.chunk.doc_id for h in walked.hits]
    assert docs[:2] == ["film", "director"], "Mara Quell links the film page to the director's page"
    assert all("ppr" in h.scores and "graph" in h.sources for h in walked.hits)
    assert "silver harbor" in walked.note


def test_rows_the_filter_excludes_are_never_returned(retriever):
    walked = graph_rerank(retriever, QUESTION, "en", _film_first(retriever), k=4,
                          settings=GraphSettings(seed_passages=1), filters={"team": "a"})
    assert "director" not in [h.chunk.doc_id for h in walked.hits]


def test_without_a_graph_the_list_is_kept_and_the_note_says_why(retriever):
    retriever.bundle.graph = None
    hits = _film_first(retriever)
    walked = graph_rerank(retriever, QUESTION, "en", hits, k=3)
    assert [h.chunk.id for h in walked.hits] == [h.chunk.id for h in hits[:3]]
    assert "no entity-passage graph" in walked.note and "cragraph index" in walked.note


def test_a_question_naming_no_known_entity_walks_from_its_passages_and_says_so(retriever):
    walked = graph_rerank(retriever, "what about ships?", "en", retriever.search("ships", k=2), k=4)
    assert walked.hits
    assert walked.note.startswith("graph walk from 2 passages alone (")
