"""The graph retrieval mode over a real tiny bundle: the bridge passage rises, filters hold, no graph says so,
and the second hop searches with the walk's best passage and fuses by rank."""


import pytest

from rag.retrieval.fusion import reciprocal_rank_fusion
from rag.retrieval.graph_walk import WALK_WEIGHT, GraphSettings, graph_rerank, second_hop
from rag.retrieval.retriever import HybridRetriever
from stores.bundle import IndexBundle
from stores.types import Chunk, Hit
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
                          settings=GraphSettings(seed_passages=1, second_hop=False))
    docs = [h.chunk.doc_id for h in walked.hits]
    assert docs[:2] == ["film", "director"], "Mara Quell links the film page to the director's page"
    assert all("ppr" in h.scores and "graph" in h.sources for h in walked.hits)
    assert "silver harbor" in walked.note


def test_rows_the_filter_excludes_are_never_returned(retriever):
    walked = graph_rerank(retriever, QUESTION, "en", _film_first(retriever), k=4,
                          settings=GraphSettings(seed_passages=1), filters={"team": "a"})
    assert "director" not in [h.chunk.doc_id for h in walked.hits], "neither the walk nor the second hop returns it"


def test_without_a_graph_the_list_is_kept_and_the_note_says_why(retriever):
    retriever.bundle.graph = None
    hits = _film_first(retriever)
    walked = graph_rerank(retriever, QUESTION, "en", hits, k=3)
    assert [h.chunk.id for h in walked.hits] == [h.chunk.id for h in hits[:3]]
    assert "no entity-passage graph" in walked.note and "cragraph index" in walked.note


def test_a_question_naming_no_known_entity_walks_from_its_passages_and_says_so(retriever):
    walked = graph_rerank(retriever, "what about ships?", "en", retriever.search("ships", k=2), k=4,
                          settings=GraphSettings(second_hop=False))
    assert walked.hits
    assert walked.note.startswith("graph walk from 2 passages alone (")


class _Spy:
    """The real search, with each call's query and answer kept."""

    def __init__(self, retriever):
        self.search, self.calls = retriever.search, []
        retriever.search = self

    def __call__(self, query, **kwargs):
        hits = self.search(query, **kwargs)
        self.calls.append((query, kwargs, hits))
        return hits


def test_the_second_hop_searches_the_question_with_the_walks_best_passage_and_fuses_by_rank(retriever):
    first = _film_first(retriever)
    alone = graph_rerank(retriever, QUESTION, "en", first, k=4, settings=GraphSettings(second_hop=False))
    spy = _Spy(retriever)
    walked = graph_rerank(retriever, QUESTION, "en", first, k=4)
    (query, kwargs, found), = spy.calls
    assert query == f"{QUESTION}\n{alone.hits[0].chunk.text}" and kwargs["mode"] == "dense"
    fused = reciprocal_rank_fusion([[h.chunk.id for h in alone.hits], [h.chunk.id for h in found]],
                                   weights=[WALK_WEIGHT, 1.0])
    assert [h.chunk.id for h in walked.hits] == sorted(fused, key=lambda c: (-fused[c], c))[:4]
    assert [h.score for h in walked.hits] == [fused[h.chunk.id] for h in walked.hits]
    for hit in walked.hits:
        assert ("second_hop" in hit.sources) == (hit.chunk.id in {h.chunk.id for h in found})
        assert ("ppr" in hit.scores) == (hit.chunk.id in {h.chunk.id for h in alone.hits})
    assert "second hop" in walked.note


def test_the_second_hop_query_stays_within_the_query_limit(retriever):
    retriever.settings.max_query_chars = len(QUESTION) + 10
    first = _film_first(retriever)
    spy = _Spy(retriever)
    graph_rerank(retriever, QUESTION, "en", first, k=4)
    (query, _, _), = spy.calls
    assert len(query) == len(QUESTION) + 10 and query.startswith(QUESTION + "\n")


def test_a_question_at_the_query_limit_gets_its_second_hop_without_a_passage(retriever):
    retriever.settings.max_query_chars = len(QUESTION)
    first = _film_first(retriever)
    spy = _Spy(retriever)
    walked = graph_rerank(retriever, QUESTION, "en", first, k=4)
    (query, _, _), = spy.calls
    assert query == QUESTION and walked.hits


class _Fixed:
    """A retriever whose search returns a fixed list."""

    def __init__(self, hits):
        self.hits = hits
        self.settings = type("Settings", (), {"max_query_chars": 8000})()

    def search(self, query, **kwargs):
        return self.hits


def test_the_walks_order_outweighs_a_passage_only_the_second_hop_found():
    def hit(name):
        return Hit(Chunk(name, name, f"{name} text"), 1.0)

    walked = [hit("a"), hit("b"), hit("c")]
    found = [hit("d"), hit("c")]
    fused = [h.chunk.id for h in second_hop(_Fixed(found), "q", walked, k=4)]
    # c is in both lists; with equal weights d (second hop's first) would tie a and pass b
    assert fused == ["c", "a", "b", "d"] and WALK_WEIGHT > 1
