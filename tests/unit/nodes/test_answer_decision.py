"""answer: candidates from every reading, one calibrated decision, the hop chain cited and traced."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from nodes.answer import answer
from rag.context import Context
from tests.fixtures.graph import KeywordEvaluator, build_tiny_index, context, use_keyword_evaluator

COMPANY = {"id": "veltrane#0", "doc_id": "veltrane", "title": "Veltrane Systems", "source": "index", "url": None,
           "text": "Veltrane Systems is a maker of marine sensors. It was founded in 2009 by Ingrid Solvang. "
                   "The company is based in Halvmere, where its first office opened."}
FOUNDER = {"id": "solvang#0", "doc_id": "solvang", "title": "Ingrid Solvang", "source": "index", "url": None,
           "text": "Ingrid Solvang is an electrical engineer. She was born in Skarnvik in 1961 and studied in "
                   "Halvmere."}
QUESTION = "Where was the founder of Veltrane Systems born?"
HOPS = [
    {"id": "q1", "question": "Who or what is the founder of Veltrane Systems?", "slot": "x1", "deps": [],
     "queries": ["Who or what is the founder of Veltrane Systems?"], "passages": [COMPANY],
     "answers": [{"text": "Ingrid Solvang", "margin": 9.0, "share": 0.95, "passage_id": "veltrane#0"}]},
    {"id": "q2", "question": "Where was {x1} born?", "slot": None, "deps": ["q1"],
     "queries": ["Where was Ingrid Solvang born?"], "passages": [FOUNDER], "answers": []},
]
STATE = {"question": QUESTION, "language": "en", "selected": [COMPANY], "hops": HOPS, "verdict": "correct",
         "route": "multihop"}


@pytest.fixture(scope="module")
def index(tmp_path_factory, tiny_embedder_dir):
    return build_tiny_index(tmp_path_factory.mktemp("decision-index"), tiny_embedder_dir)


@pytest.fixture(autouse=True)
def keyword_scores(monkeypatch):
    use_keyword_evaluator(monkeypatch)


@pytest.fixture
def run(index):
    def answered(state, **settings):
        return answer(state, Runtime(context=context(index, **settings)))
    return answered


def test_a_planned_question_is_read_along_its_hops_and_the_chain_is_cited_and_traced(run):
    result = run(STATE, answer_threshold=0.0)
    record = result["trace"][0]
    chains = [c for c in record["candidates"] if c["reading"] == "hop_chain"]
    assert chains and chains[0]["answer"] == "Skarnvik"
    assert [step["answer"] for step in chains[0]["chain"]] == ["Ingrid Solvang", "Skarnvik"]
    assert chains[0]["chain"][1]["question"] == "Where was Ingrid Solvang born?"
    assert [step["passage_id"] for step in chains[0]["chain"]] == ["veltrane#0", "solvang#0"]  # each hop's page
    if record["decision"].startswith("hop_chain"):  # the chain was chosen: both pages cited, each hop's sentence
        assert result["answer"].startswith("Skarnvik")
        assert {c["id"] for c in result["citations"]} == {"veltrane#0", "solvang#0"}
        assert [step["answer"] for step in record["chain"]] == ["Ingrid Solvang", "Skarnvik"]
        assert any("Skarnvik" in e["sentence"] for e in result["evidence"])
    assert all(0.0 <= c["probability"] <= 1.0 for c in record["candidates"])
    assert round(result["confidence"], 4) == record["counts"]["probability"]


def test_a_claim_about_a_bridge_entity_is_checked_along_the_chain(run):
    # the company's page alone does not say where its founder was born; the founder's page, the last hop's, does
    claim = "Was the founder of Veltrane Systems born in Skarnvik?"
    hops = [HOPS[0], {**HOPS[1], "question": "Was {x1} born in Skarnvik?",
                      "queries": ["Was Ingrid Solvang born in Skarnvik?"]}]
    result = run({**STATE, "question": claim, "hops": hops}, answer_threshold=0.0)
    record = result["trace"][0]
    assert result["answer"].startswith("yes") and record["decision"].startswith("claim")
    assert [step["answer"] for step in record["chain"]] == ["Ingrid Solvang", "yes"]


CURIE = {"id": "curie#0", "doc_id": "curie", "title": "Marie Curie", "source": "index", "url": None,
         "text": "Marie Curie was a physicist and chemist who conducted pioneering research on radioactivity. In "
                 "1911 she received the Nobel Prize in Chemistry for the discovery of polonium and radium. She was "
                 "born in Warsaw and later moved to Paris."}


@pytest.mark.parametrize(("claim", "expected"), [
    ("Did Marie Curie discover polonium?", "yes"),  # stated in other words ("for the discovery of polonium")
    ("Was Marie Curie born in Paris?", "no"),  # the page gives another birthplace
])
def test_a_single_claim_is_decided_on_the_page_of_its_subject(run, claim, expected):
    result = run({"question": claim, "language": "en", "selected": [CURIE], "verdict": "correct"})
    record = result["trace"][0]
    assert result["answer"].startswith(expected) and record["decision"].startswith("claim")
    assert result["citations"][0]["id"] == "curie#0"


def test_a_claim_about_someone_no_document_names_is_withheld_and_the_note_names_them(run):
    absent = {"question": "Was Zorvan Pellick born in Warsaw?", "language": "en", "selected": [CURIE],
              "verdict": "correct"}
    result = run(absent, answer_threshold=0.5)
    assert result["abstained"] and not result["answer"].startswith(("yes", "no"))
    assert "no document found mentions 'Zorvan Pellick'" in result["trace"][0]["note"]


def test_a_hop_that_found_nothing_stops_the_chain_and_the_one_pass_reading_remains(run):
    lost = [HOPS[0], {**HOPS[1], "passages": []}]
    result = run({**STATE, "hops": lost}, answer_threshold=0.0)
    readings = {c["reading"] for c in result["trace"][0]["candidates"]}
    assert "hop_chain" not in readings and "one_pass" in readings and not result["abstained"]


def test_every_candidate_under_the_threshold_abstains_and_shows_the_best_one_held_back(run):
    result = run(STATE, answer_threshold=1.0)
    held = result["withheld"]
    assert result["abstained"] and result["citations"] == [] and held["answer"] and held["citations"]
    assert held["reason"] == f"probability {held['confidence']:.2f} < answer_threshold 1.0"
    assert result["trace"][0]["note"].startswith("Not sure enough (probability")


@pytest.mark.parametrize("threshold", [-0.1, 1.5, True])
def test_an_answer_threshold_outside_zero_to_one_is_refused(threshold):
    with pytest.raises(ValueError, match="answer_threshold is a probability"):
        Context(answer_threshold=threshold)


def test_an_unparsed_yes_no_question_gets_no_default_answer(run):
    odd = {"question": "Is it?", "language": "en", "selected": [COMPANY], "verdict": "correct"}
    result = run(odd, answer_threshold=0.0)
    assert result["abstained"] and result["withheld"] is None
    assert result["trace"][0]["note"].startswith("no reading found an answer")


def test_a_page_the_named_page_links_to_is_read_from_the_retrieved_pool_and_cited_as_a_chain(run):
    student = {"id": "fenwick#0", "doc_id": "fenwick", "title": "Orla Fenwick", "source": "index", "url": None,
               "text": "Orla Fenwick was born in Brackwater in 1981. She trained as an architect under Tobias Rell "
                       "at the Quayside Studio."}
    teacher = {"id": "rell#0", "doc_id": "rell", "title": "Tobias Rell", "source": "index", "url": None,
               "text": "Tobias Rell is an architect. He was born in Saltmere in 1950 and designed the harbour baths."}
    question = "Where was Orla Fenwick's architecture teacher born?"
    # grading kept only the page the question names; the teacher's page is among the retrieved candidates
    result = run({"question": question, "language": "en", "selected": [student], "candidates": [student, teacher],
                  "verdict": "correct"}, answer_threshold=0.0)
    linked = [c for c in result["trace"][0]["candidates"] if c["reading"] == "linked"]
    assert linked and linked[0]["answer"] == "Saltmere"
    assert [step["answer"] for step in linked[0]["chain"]] == ["Tobias Rell", "Saltmere"]
    # his page is asked the link's second hop: the named student gives way to the teacher the link found
    assert "Tobias Rell" in linked[0]["chain"][1]["question"] and "Fenwick" not in linked[0]["chain"][1]["question"]
    # given, a linked candidate is cited by both pages, the linking sentence its first hop's evidence
    from nodes.answer import _formatted
    from rag.answering.readings import per_passage
    from rag.reader.cache import load_reader

    read = per_passage(load_reader(), question, [student], "en", pool=[student, teacher])
    chosen = next(c for c in read if c.reading == "linked")
    answered = _formatted(question, chosen, [student], [], 2, "en", lambda: KeywordEvaluator())
    assert answered["answer"] == "Saltmere [2]"
    assert [c["id"] for c in answered["citations"]] == ["fenwick#0", "rell#0"]
    assert "Tobias Rell" in answered["evidence"][0]["sentence"] and answered["evidence"][0]["n"] == 1
    assert "Saltmere" in answered["evidence"][1]["sentence"] and answered["evidence"][1]["n"] == 2


LINKED_DOCS = [
    {"id": "marlow", "title": "Petra Marlow",
     "text": "Petra Marlow is the head brewer of Ashcombe Ales. She grew up on a farm and was born in Kestrel Bay "
             "in 1979. Her colleague Jon Fell was born in Lowick."},
    {"id": "kestrel", "title": "Kestrel Bay",
     "text": "Kestrel Bay is a fishing town on the Orrin estuary. About 4,200 people live there. The Orrin river "
             "meets the sea at its harbour."},
    {"id": "lowick", "title": "Lowick", "text": "Lowick is a market town on the Seldon river, with 9,800 people."},
    {"id": "ashcombe", "title": "Ashcombe Ales",
     "text": "Ashcombe Ales is a brewery founded in 2011. Its head brewer is Petra Marlow."},
    {"id": "fell", "title": "Jon Fell", "text": "Jon Fell is a maltster. He has worked for Ashcombe Ales since 2015."},
    {"id": "seldon", "title": "Seldon", "text": "The Seldon is a river of 48 km that flows through Lowick."},
    {"id": "hopfair", "title": "Lowick Hop Fair", "text": "The hop fair is held in Lowick every September."},
    {"id": "orrin", "title": "Orrin", "text": "The Orrin rises in the hills and is 31 km long."},
]


def test_a_linked_page_retrieval_never_reached_is_searched_for_in_the_index(tmp_path, tiny_embedder_dir):
    index = build_tiny_index(tmp_path, tiny_embedder_dir, LINKED_DOCS)
    page = {"id": "marlow#0", "doc_id": "marlow", "title": "Petra Marlow", "source": "index", "url": None,
            "text": LINKED_DOCS[0]["text"]}
    question = "How many people live in the town where Petra Marlow was born?"
    # retrieval and grading left only her page: the town's page is found through her "born in" sentence
    state = {"question": question, "language": "en", "selected": [page], "candidates": [page],
             "verdict": "correct"}
    result = answer(state, Runtime(context=context(index, answer_threshold=0.0)))
    linked = {c["chain"][0]["answer"]: c for c in result["trace"][0]["candidates"] if c["reading"] == "linked"}
    assert "Kestrel Bay" in linked and "4,200" in linked["Kestrel Bay"]["answer"]
    assert linked["Kestrel Bay"]["chain"][0]["passage_id"] == "marlow#0"


def test_a_linking_sentence_is_searched_for_by_the_words_the_question_does_not_say():
    from rag.answering.bridging import unasked

    said = unasked("She was born in Kestrel Bay in 1979.", "Where was Petra Marlow born?")
    assert said == "She was in Kestrel Bay in 1979"
    assert unasked("她出生于石湾镇。", "周立出生的镇有多少人口？") == "她于石湾"
