"""Fast unit tests of the reader's model-free parts ."""

import numpy as np
import pytest

from rag.reader.decode import best_spans, clean_span
from rag.reader.questions import question_form
from rag.reader.types import Passage
from rag.reader.window import build_context, score_sentences


def test_question_forms() -> None:
    assert question_form("Are Quorra Labs and Pellmark Audio both based in Brenholt?", "en").kind == "yesno"
    assert question_form("Who is the oldest, Hedda Marsk or Tobias Frenn?", "en").options == (
        "Hedda Marsk",
        "Tobias Frenn",
    )
    assert question_form("Which studio opened first The Lantern Room or Copperfield Sound ?", "en").options == (
        "The Lantern Room",
        "Copperfield Sound",
    )
    assert question_form("Is the rent for the rehearsal room high or low?", "en").kind == "span"
    assert question_form("who played bass on 7 or 8 nights in halvmere", "en").kind == "span"
    assert question_form("Открыла ли компания «Квора Лабс» завод в Бренхольте в 1998 году?", "ru").kind == "yesno"
    assert question_form("1998年奎拉实验室在布伦霍尔特开了工厂吗？", "zh").kind == "yesno"
    assert question_form("哪家工厂的电池是否通过了安全检测？", "zh").kind == "span"


def test_context_maps_back_to_passages() -> None:
    passages = [
        Passage("Paris is the capital of France. It is large.", "Paris"),
        Passage("Berlin is the capital of Germany.", "Berlin"),
    ]
    ctx = build_context("What is the capital of Germany?", passages, "en", 100, lambda s: len(s.split()))
    i = ctx.text.index("Germany")
    segment, start, end = ctx.locate(i, i + len("Germany"))
    assert segment.passage == 1 and passages[1].text[start:end] == "Germany"
    j = ctx.text.index("Berlin")  # the title comes first
    assert ctx.locate(j, j + 6)[0].in_title


def test_a_bridge_entitys_own_page_is_read_with_hop_weight() -> None:
    # the question names the suite, not the violinist whose page holds the answer
    question = "The score of the Halvmere String Suite is in the hand of a Vestral musician whose teacher was whom?"
    passages = [
        Passage("The Halvmere String Suite is a suite in five movements. Its score is in the hand of "
                "Edvin Rask.", "Halvmere String Suite"),
        Passage("The String Suite in D is a string suite by Mira Tolland. The suite was first a suite for two "
                "violins.", "String suite in D"),
        Passage("Edvin Rask was a violinist of the Brenholt Music School. He was born in "
                "Skarnvik in 1921. He took his first lessons from his teacher Greta Halloran.",
                "Edvin Rask (violinist)"),
    ]
    words = lambda s: len(s.split())  # noqa: E731
    plain = build_context(question, passages, "en", 50, words)
    hop = build_context(question, passages, "en", 50, words, hop_weight=0.25)
    assert "Halloran" not in plain.text
    assert "Halloran" in hop.text


def test_a_page_the_question_names_gains_nothing_from_mentions() -> None:
    passages = [Passage("Berlin is the capital of Germany.", "Germany"), Passage("Berlin has museums.", "Berlin")]
    hop = score_sentences("What does the capital of Germany have?", passages, "en", 1.0)
    assert hop[1].score > score_sentences("What does the capital of Germany have?", passages, "en")[1].score
    named = "What does Berlin, the capital of Germany, have?"
    assert score_sentences(named, passages, "en", 1.0) == score_sentences(named, passages, "en")


def test_a_mention_is_found_after_a_longer_word_that_holds_the_name() -> None:
    passages = [Passage("A brush maker met Rush in 1980.", "Brushes"), Passage("Rush is a band.", "Rush")]
    hop = score_sentences("Who met the brush maker?", passages, "en", 1.0)
    assert hop[1].score > score_sentences("Who met the brush maker?", passages, "en")[1].score


def test_a_chunk_naming_its_own_document_is_no_hop() -> None:
    passages = [Passage("Tom Sawyer paints a fence with Huck.", "Tom Sawyer"),
                Passage("Tom Sawyer lives in Missouri.", "Tom Sawyer"), Passage("Huck lives in a barrel.", "Huck")]
    question = "Who paints a fence?"
    hop, base = score_sentences(question, passages, "en", 1.0), score_sentences(question, passages, "en")
    assert hop[1] == base[1]  # the sibling chunk of the mentioning one gains nothing
    assert hop[2].score > base[2].score  # the other page it mentions does


def test_best_span_and_cleaning() -> None:
    start = np.array([0, 0, 5, 0, 0.0])
    end = np.array([0, 0, 0, 4, 8.0])
    assert best_spans(start, end, 1, 5, max_tokens=2)[0][:2] == (2, 3)
    text = ' "Rush", '
    assert text[slice(*clean_span(text, 0, len(text)))] == "Rush"


def test_a_near_tie_between_spans_is_broken_the_same_way_whatever_the_kernels_rounded() -> None:
    # "The Volga" (tokens 1-2) and "Volga" (token 2) a few 1e-4 apart: which is ahead is the CPU's rounding (issue 42)
    for noise in (-3e-4, 0.0, 3e-4):
        start = np.array([0.0, 4.0 + noise, 4.0, -9.0])
        end = np.array([0.0, -9.0, 5.0, 1.0])
        spans = best_spans(start, end, 1, 4, max_tokens=3, top=3)
        assert [(s, e) for s, e, _ in spans] == [(2, 2), (1, 2), (2, 3)]  # the shorter first, then the earlier
        assert [score for _, _, score in spans] == [9.0, 9.0, 5.0]  # scores as ranked, to SCORE_DECIMALS
    assert best_spans(np.zeros(4), np.zeros(4), 0, 4, max_tokens=2, top=3) == [(0, 0, 0.0), (1, 1, 0.0), (2, 2, 0.0)]
    assert best_spans(np.zeros(4), np.zeros(4), 0, 2, max_tokens=1, top=5) == [(0, 0, 0.0), (1, 1, 0.0)]


def test_spans_keep_whole_words_and_no_open_bracket() -> None:
    def cleaned(text: str, start: int, end: int) -> str:
        return text[slice(*clean_span(text, start, end))]

    assert cleaned("был Томасом Харкави.", 4, 17) == "Томасом Харкави"  # a subword token ended mid-word
    assert cleaned("the Vestral crown", 1, 8) == "the Vestral"
    assert cleaned("отдел продаж (ОП) и", 0, 16) == "отдел продаж"
    assert cleaned("the founder (b. 1961) was", 0, 21) == "the founder (b. 1961)"
    assert cleaned("它位于北京市中心", 3, 5) == "北京"  # no word edges in Chinese: the span stays


def test_support_needs_the_answer_words_in_the_cited_passages() -> None:
    from rag.reader.support import is_supported

    passages = ["The Volga flows into the Caspian Sea.", "Kazan stands on the Volga."]
    assert is_supported("the Caspian Sea", passages)
    assert not is_supported("the Black Sea near Odessa", passages)
    assert is_supported("Каспийское море", ["Волга впадает в Каспийское море."])
    # an answer in simplified characters from a passage in traditional ones (and the reverse) is supported
    assert is_supported("北岭钢铁队", ["灰狼隊在分區輪擊敗了北嶺鋼鐵隊。"])
    assert is_supported("北嶺鋼鐵隊", ["灰狼队在分区轮击败了北岭钢铁队。"])
    assert not is_supported("南港渔夫队", ["灰狼隊在分區輪擊敗了北嶺鋼鐵隊。"])


def test_question_and_span_types_drive_the_reranker() -> None:
    from rag.reader.rerank import FEATURES, question_type, rerank, span_type
    from rag.reader.types import ReaderAnswer

    assert [question_type(q) for q in ("When was it built?", "Сколько лет?", "谁发现了镭？", "Где он жил?")] == [
        "time",
        "number",
        "person",
        "place",
    ]
    assert [span_type(t) for t in ("1914", "12 km", "Marie Curie", "a small town")] == [
        "year",
        "number",
        "name",
        "other",
    ]
    candidates = [
        ReaderAnswer("Marie Curie", "span", 0, "", 0, 11, 5.0, span_score=5.0),
        ReaderAnswer("1914", "span", 0, "", 20, 24, 4.0, span_score=4.0),
    ]
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("timexyear")] = 10.0  # a "when" question wants a year
    ranked = rerank("When was the institute founded?", candidates, weights)
    assert [c.text for c in ranked] == ["1914", "Marie Curie"] and ranked[0].score == 10.0


def test_a_reranker_fitted_on_other_features_is_refused(tmp_path) -> None:
    import json
    import shutil

    import pytest

    from rag.reader.reader import DEFAULT_WEIGHTS, read_weights
    from rag.reader.types import ReaderWeightsError

    shutil.copy(DEFAULT_WEIGHTS / "reader.npz", tmp_path / "reader.npz")
    config = json.loads((DEFAULT_WEIGHTS / "config.json").read_text())
    config["reranker"] = {"features": ["span_score"], "weights": [1.0]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ReaderWeightsError, match="re-ranker"):
        read_weights(tmp_path)


@pytest.mark.parametrize(("text", "span", "whole"), [
    ("She studied at Kestrel College of Design in 1990.", "Kestrel College", "Kestrel College of Design"),
    ("He graduated from the University of Tarn Bay in 1971.", "Tarn Bay", "University of Tarn Bay"),
    ("The mill was sold to the Bank of Orrin in 1902.", "Orrin", "Bank of Orrin"),
    ("Its harbour grew in the nineteenth century, and the fleet moved south when the company that owned it "
     "was sold to the Royal Bank of Orrin in 1902.", "Orrin", "Royal Bank of Orrin"),  # far into a passage
    ("It is the capital of Marrowfen.", "Marrowfen", "Marrowfen"),  # "capital" is no part of a name
    ("The war of 1812 ended it.", "war", "war"),  # a span in lower case stays
])
def test_a_name_cut_at_its_of_is_made_whole(text, span, whole):
    at = text.index(span)
    start, end = clean_span(text, at, at + len(span))
    assert text[start:end] == whole


@pytest.mark.parametrize(("text", "span", "whole"), [
    ("She trained at the Halvmere School of Architecture.", "Halvmere", "Halvmere School of Architecture"),
    ("The town stands on the River Caldry, north of the hills.", "Caldry", "River Caldry"),
    ("He was born in Skarnvik, Norway, in 1950.", "Skarnvik", "Skarnvik"),  # a comma parts two names
    ("Caldry mills closed. Today Skarnvik is a port.", "Skarnvik", "Skarnvik"),  # a sentence's first word
    ("In Skarnvik the mills closed.", "Skarnvik", "Skarnvik"),
])
def test_a_latin_name_cut_inside_is_made_whole(text, span, whole):
    at = text.index(span)
    start, end = clean_span(text, at, at + len(span))
    assert text[start:end] == whole
