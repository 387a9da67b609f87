import pytest

from stores.docstore import DocStore
from stores.types import Chunk


@pytest.fixture
def store(tmp_path):
    store = DocStore(tmp_path / "docstore.sqlite")
    chunks = [
        Chunk("a#0", "a", "alpha text", "A", {"category": "cs.AI", "language": "en"}),
        Chunk("a#1", "a", "more alpha", "A", {"category": "cs.AI", "language": "en"}),
        Chunk("b#0", "b", "бета", "B", {"category": "math.CO", "language": "ru"}),
        Chunk("c#0", "c", "伽马", "C", {"category": "cs.CL", "language": "zh"}),
    ]
    store.add([1, 2, 3, 4], chunks)
    yield store
    store.close()


def test_get_keeps_requested_order(store):
    assert [c.id for c in store.get([3, 1])] == ["b#0", "a#0"]


def test_filters_equality_prefix_and_any_of(store):
    assert store.filter_rows({"language": "ru"}).tolist() == [3]
    assert store.filter_rows({"category": {"prefix": "cs."}}).tolist() == [1, 2, 4]
    assert store.filter_rows({"category": {"prefix": "cs."}, "language": "zh"}).tolist() == [4]
    assert store.filter_rows({"doc_id": ["a", "c"]}).tolist() == [1, 2, 4]
    assert store.filter_rows({"category": "nothing"}).tolist() == []
    with pytest.raises(ValueError):
        store.filter_rows({"category": {"suffix": "x"}})


def test_delete_documents_returns_rows(store):
    assert sorted(store.delete_documents(["a"])) == [1, 2]
    assert len(store) == 2
    assert store.document_ids() == {"b", "c"}
    assert store.next_row() == 5
