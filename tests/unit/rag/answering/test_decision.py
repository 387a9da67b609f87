"""The decision model: loading, refusing damaged weights, probabilities; the features of a candidate."""

from __future__ import annotations

import json
import math

import pytest

from rag.answering import Candidate, DecisionWeightsError, load_decision
from rag.answering.decision import DEFAULT_WEIGHTS, TRAINING_COMMAND
from rag.answering.features import FEATURES, MODEL_FEATURES, featurize, model_vector
from rag.reader.types import ReaderAnswer


def weights(path, **changes):
    n = len(MODEL_FEATURES)
    data = {"features": list(MODEL_FEATURES), "mean": [0.0] * n, "scale": [1.0] * n, "coef": [0.0] * n,
            "intercept": 0.0, **changes}
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_the_packaged_weights_load_and_give_probabilities():
    model = load_decision()
    p = model.probability(dict.fromkeys(FEATURES, 0.0))
    assert 0.0 < p < 1.0
    assert json.loads(DEFAULT_WEIGHTS.read_text())["trained"]["questions"] > 0  # fitted, not a placeholder


def test_a_wider_margin_raises_the_probability_along_its_coefficient(tmp_path):
    coef = [1.5 if name == "margin" else 0.0 for name in MODEL_FEATURES]
    model = load_decision(weights(tmp_path / "w.json", coef=coef))
    low, high = (model.probability({"margin": m}) for m in (-1.0, 1.0))
    assert low < 0.5 < high and abs(low + high - 1.0) < 1e-9
    mapped = load_decision(weights(tmp_path / "s.json", coef=coef, calibration=[0.5, -1.0]))
    # the logistic map sigmoid(a z + b): smooth, monotone, and not the raw probability
    assert mapped.probability({"margin": 1.0}) == pytest.approx(1 / (1 + math.exp(-(0.5 * 1.5 - 1.0))))
    assert mapped.probability({"margin": -1.0}) < mapped.probability({"margin": 1.0}) < model.probability(
        {"margin": 1.0})


@pytest.mark.parametrize(("changes", "why"), [
    ({"features": ["margin"]}, "fitted on other features"),
    ({"scale": [0.0] * len(MODEL_FEATURES)}, "damaged"),
    ({"coef": "x"}, "unreadable"),
    ({"calibration": [1.0, float("nan")]}, "damaged"),
    ({"calibration": [1.0]}, "unreadable"),
])
def test_damaged_weights_name_the_file_and_the_training_command(tmp_path, changes, why):
    path = weights(tmp_path / "bad.json", **changes)
    with pytest.raises(DecisionWeightsError, match=why) as raised:
        load_decision(path)
    assert str(tmp_path / "bad.json") in str(raised.value) and TRAINING_COMMAND in str(raised.value)


def test_missing_weights_are_named(tmp_path):
    with pytest.raises(DecisionWeightsError, match="missing"):
        load_decision(str(tmp_path / "none.json"))


def _candidate(text, reading, passage, sentence, margin=5.0, chain=()):
    read = ReaderAnswer(text, "span", 0, sentence, 0, len(text), 1.0, margin=margin, confidence=0.9)
    return Candidate(read, reading, passage, 0, list(chain))


def test_features_tell_a_second_hop_page_from_the_first_and_weigh_what_each_speaks_of():
    company = {"id": "c", "title": "Veltrane Systems",
               "text": "Veltrane Systems was founded by Ingrid Solvang. It is based in Halvmere.", "grade": 0.4}
    person = {"id": "p", "title": "Ingrid Solvang", "text": "Ingrid Solvang was born in Skarnvik in 1961."}
    question = "Where was the founder of Veltrane Systems born?"
    first = _candidate("Halvmere", "one_pass", company, "It is based in Halvmere.")
    second = _candidate("Skarnvik", "per_passage", person, "Ingrid Solvang was born in Skarnvik in 1961.")
    rare = {"skarnvik": 5.0, "veltran": 5.0, "system": 1.0, "born": 1.0, "founder": 2.0}
    featurize([first, second], question, {"verdict": "correct", "route": "single", "language": "en",
                                          "best_evidence": 0.3}, [company, person], lambda t: rare.get(t, 1.0))
    assert first.features["first_hop"] == 1.0 and first.features["second_hop"] == 0.0
    assert second.features["second_hop"] == 1.0 and second.features["first_hop"] == 0.0
    # the company's page speaks of the question's rarest term; the founder's page does not name the company
    assert first.features["cover"] > second.features["cover"] and second.features["rare_missing"] == 1.0
    assert first.features["rare_missing"] == 0.0
    assert first.features["graded"] == 1.0 and first.features["grade"] == 0.4 and second.features["graded"] == 0.0
    assert first.features["margin"] == 0.5 and set(first.features) == set(FEATURES)
    assert first.features["in_section"] == 0.0  # a page of its own


def test_a_section_of_a_longer_document_is_told_from_a_page_of_its_own():
    page = {"id": "a", "title": "Wyvenham Institute", "document": "Wyvenham Institute",
            "text": "It is directed by Ingrid Tolvaj."}
    section = {**page, "id": "b", "document": "Corvane Platform: Architecture and Operations"}
    candidates = [_candidate("Ingrid Tolvaj", "one_pass", p, p["text"]) for p in (page, section)]
    featurize(candidates, "Who directs the Wyvenham Institute?", {"language": "en"}, [page, section], lambda t: 1.0)
    assert [c.features["in_section"] for c in candidates] == [0.0, 1.0]
    assert model_vector(candidates[1].features)[MODEL_FEATURES.index("in_section*first_hop")] == 1.0


def test_a_list_says_whether_the_document_laid_it_out_and_how_many_items_echo_the_question():
    section = {"id": "s", "title": "Ports", "text": "The company runs the Ouwan, Nanting and Qingyu piers."}
    laid_out = _candidate("Ouwan Pier", "one_pass", section, section["text"])
    laid_out.items, laid_out.list_form = ["Ouwan Pier", "Nanting Pier", "2019"], "block"
    cut = _candidate("Ouwan", "per_passage", section, section["text"])
    cut.items, cut.list_form = ["Ouwan", "Nanting"], "sentence"
    featurize([laid_out, cut], "Which piers does the company run?", {"language": "en"}, [section], lambda t: 1.0)
    assert [c.features["list_block"] for c in (laid_out, cut)] == [1.0, 0.0]
    assert laid_out.features["items_echo"] == pytest.approx(2 / 3) and cut.features["items_echo"] == 0.0
    assert laid_out.features["items_dated"] == pytest.approx(1 / 3) and cut.features["items_dated"] == 0.0


def test_a_candidate_that_is_the_value_of_a_plans_earlier_hop_is_marked_as_the_bridge():
    section = {"id": "s", "title": "Council", "text": "Ingrid Tolvaj chairs the council. She directs Wyvenham Lab."}
    hop = {"question": "Who chairs the council?", "answer": "Ingrid Tolvaj", "passage": section}
    chained = _candidate("Wyvenham Lab", "hop_chain", section, section["text"],
                         chain=[hop, {"question": "Which lab does Ingrid Tolvaj direct?", "answer": "Wyvenham Lab",
                                      "passage": section}])
    bridge = _candidate("Ingrid Tolvaj", "one_pass", section, section["text"])
    part = _candidate("Tolvaj family archive of the Ingrid Tolvaj estate", "per_passage", section, section["text"])
    featurize([chained, bridge, part], "Which lab does the council's chair direct?", {"language": "en"}, [section],
              lambda t: 1.0)
    assert [c.features["hop_value"] for c in (chained, bridge, part)] == [0.0, 1.0, 0.0]


def test_the_best_candidate_is_chosen_and_a_rule_answer_meets_the_same_threshold(tmp_path):
    from rag.answering.decision import answers, choose

    coef = [1.5 if name == "margin" else 0.0 for name in MODEL_FEATURES]
    model = load_decision(weights(tmp_path / "w.json", coef=coef))
    passage = {"id": "p", "title": "", "text": "x"}
    wide, narrow = (_candidate(text, "one_pass", passage, "x", margin=m) for text, m in (("A", 9.0), ("B", 1.0)))
    for candidate, margin in ((wide, 0.9), (narrow, 0.1)):
        candidate.features = {"one_pass": 1.0, "margin": margin}
    assert choose([narrow, wide], model) is wide and wide.probability > narrow.probability > 0
    ruled = _candidate("yes", "yes_no", passage, "x")
    ruled.features = {"yes_no": 1.0}
    assert choose([wide, ruled], model) is wide and 0 < ruled.probability < wide.probability
    assert choose([ruled], model) is ruled and ruled.probability == 0.5  # every coefficient of a rule is 0 here
    assert answers(ruled, 0.5) and not answers(ruled, 0.6)  # no rule answer bypasses answer_threshold


def test_a_page_another_reading_answered_with_is_led_to_and_that_answer_leads_on():
    # Russian titles are inflected and reordered on their pages: the names still match
    company = {"id": "c", "title": "Тальвея (компания)",
               "text": "«Тальвея» основана в 2011 году Златой Подберезиной в Кремнегорске."}
    person = {"id": "p", "title": "Подберезина, Злата Игоревна",
              "text": "Злата Подберезина родилась в Ольховце в 1979 году."}
    question = "В каком городе родилась основательница компании «Тальвея»?"
    bridge = _candidate("Златой Подберезиной", "one_pass", company, company["text"])
    answer = _candidate("Ольховце", "per_passage", person, person["text"])
    featurize([bridge, answer], question, {"language": "ru"}, [company, person], lambda t: 1.0)
    assert answer.features["led_to"] == 1.0 and answer.features["leads_on"] == 0.0
    assert bridge.features["leads_on"] == 1.0 and bridge.features["led_to"] == 0.0
    assert bridge.features["named_page"] == 1.0  # the question names the company's page


def test_the_pages_of_found_entities_are_read_alone_after_the_first_passages():
    from rag.answering.readings import PER_PASSAGE, bridge_pages

    filler = [{"id": f"f{i}", "title": f"Harbour note {i}", "text": "Ferries leave at noon."}
              for i in range(PER_PASSAGE)]
    town = {"id": "t", "title": "Lunevar", "text": "Lunevar lies on the River Caldry."}
    other = {"id": "o", "title": "Skarnvik", "text": "Skarnvik lies on the Ostrel."}
    context = [*filler, other, town]
    person = {"id": "a", "title": "Aurel Denbrook", "text": "Aurel Denbrook was born in Lunevar."}
    found = [_candidate("Lunevar", "one_pass", person, person["text"])]
    assert bridge_pages(found, context) == [PER_PASSAGE + 1]  # Lunevar's page, not Skarnvik's
    found_on_its_own_page = [_candidate("Lunevar", "one_pass", town, town["text"])]
    assert bridge_pages(found_on_its_own_page, context) == []


def test_pages_linked_from_a_named_page_are_found_by_the_sentence_that_names_them():
    from rag.answering.readings import linked_pages

    student = {"id": "s", "title": "Orla Fenwick",
               "text": "Orla Fenwick was born in Brackwater in 1981. She trained as an architect under Tobias "
                       "Rell at the Quayside Studio. She sails on weekends. Her sister Ines Fenwick runs a bakery."}
    teacher = {"id": "t", "title": "Tobias Rell", "text": "Tobias Rell was born in Saltmere in 1950."}
    town = {"id": "b", "title": "Brackwater", "text": "Brackwater is a market town on the Ouse."}
    sister = {"id": "i", "title": "Ines Fenwick", "text": "Ines Fenwick was born in Brackwater."}
    context = [student, town, sister, teacher]
    links = linked_pages("Where was Orla Fenwick's architecture teacher born?", context)
    teacher_link = next(link for link in links if link["to"] == 3)  # its sentence speaks of an "architect"
    assert teacher_link["from"] == 0 and "Tobias Rell" in teacher_link["sentence"]
    assert 2 not in [link["to"] for link in links]  # the sister's sentence and its neighbours share nothing with it
    assert 0 not in [link["to"] for link in links]  # the named page itself is not a link
    assert linked_pages("Where was Tobias Rell born?", [teacher, town]) == []  # his page names no other page


def test_asked_cover_is_what_the_candidates_sentence_says_of_what_the_question_asks_beyond_its_entity():
    river = {"id": "r", "title": "Harl", "text": "The Harl flows past 12 villages. Its source lies in the Mossfell."}
    other = {"id": "o", "title": "Brenn", "text": "The Brenn is 45 km long."}
    question = "How long is the Harl?"
    villages = _candidate("12", "one_pass", river, "The Harl flows past 12 villages.")
    neighbour = _candidate("45 km", "per_passage", other, "The Brenn is 45 km long.")
    featurize([villages, neighbour], question, {"language": "en"}, [river, other], lambda t: 1.0)
    assert villages.features["asked_cover"] == 0.0  # about the Harl, silent on its length
    assert neighbour.features["asked_cover"] == 1.0  # the length, of another river
    assert villages.features["first_hop"] == 1.0 and neighbour.features["first_hop"] == 0.0


def test_an_option_page_the_context_lacks_is_searched_for_by_its_name():
    from rag.answering.readings import with_option_pages

    kessa = {"id": "kessa#0", "title": "Kessa Ferry", "text": "The Kessa Ferry began sailing in 1954."}
    tarn = {"id": "tarn#0", "title": "Tarn Ferry", "text": "The Tarn Ferry began sailing in 1961."}
    searched: list[str] = []

    def follow(texts):
        searched.extend(texts)
        return [kessa, tarn]  # an index's hits: the named page among them, whatever their order

    question = "Which ferry is older, the Tarn Ferry or the Kessa Ferry?"
    pages = with_option_pages(question, [kessa], "en", follow)
    assert [p["id"] for p in pages] == ["kessa#0", "tarn#0"] and searched == ["the Tarn Ferry"]
    assert with_option_pages("Where does the Kessa Ferry sail?", [kessa], "en", follow) == [kessa]


def test_a_question_term_no_document_holds_is_never_the_rarest_missing_one():
    # a Chinese question's bigram across two words ("岩砌") is in no document: it cannot tell one page from another
    from nodes.answer import rarity_in

    class Bm25:
        def vocabulary(self):
            return {"花岗": 1, "灯塔": 3}

        def __len__(self):
            return 10

    rarity = rarity_in(Bm25())
    assert rarity("岩砌") == 0.0 and rarity("花岗") > rarity("灯塔") > 0.0
    page = {"id": "t", "title": "白沙口灯塔", "text": "白沙口灯塔用花岗岩建成。"}
    claim = _candidate("是", "one_pass", page, "白沙口灯塔用花岗岩建成。")
    featurize([claim], "白沙口灯塔是用花岗岩砌成的吗", {"language": "zh"}, [page], rarity)
    assert claim.features["rare_missing"] == 0.0


def test_rare_missing_is_the_share_of_the_tied_rarest_terms_missing_whatever_the_order():
    # in a small index many terms tie as the rarest (each in one document); taking one of them by a set's order
    # made the feature change from one process to the next
    page = {"id": "k", "title": "Kestlow Head", "text": "The lighthouse at Kestlow Head was lit in 1871."}
    lit = _candidate("1871", "one_pass", page, "The lighthouse at Kestlow Head was lit in 1871.")
    rarity = {"kestlow": 2.0, "lighthous": 2.0, "granit": 2.0}.get  # the stemmed terms
    featurize([lit], "When was the granite lighthouse at Kestlow lit?", {"language": "en"}, [page],
              lambda term: rarity(term, 1.0))
    assert lit.features["rare_missing"] == pytest.approx(1 / 3)  # "granite" of the three tied terms is unsaid
