"""`python -m cragraph_lab eval qa` end to end on a small hotpotqa slice: every mode and peer, the
report, plots, resume."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
HOTPOT = DATA / "hotpotqa_migres200"
QUESTIONS = 2
DISTRACTORS = 20

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def slice_dataset(tmp_path_factory) -> Path:
    """The first questions of hotpotqa_migres200 over their gold passages plus a few random distractors."""
    if not HOTPOT.is_dir():
        pytest.skip(f"benchmark data not found at {HOTPOT} (a clone without ../shared/data)")
    folder = tmp_path_factory.mktemp("qa") / "hotpot_slice"
    folder.mkdir()
    lines = (HOTPOT / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:QUESTIONS]
    gold = {g for line in lines for g in json.loads(line)["supporting_ids"]}
    corpus = [json.loads(line) for line in (HOTPOT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    others = [d for d in corpus if d["id"] not in gold]
    kept = [d for d in corpus if d["id"] in gold] + random.Random(7).sample(others, DISTRACTORS)
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in kept) + "\n", encoding="utf-8")
    return folder


def test_all_modes_report_plots_and_resume(slice_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from cragraph_lab.qa import ALL_MODES, run_qa_eval

    out, index_root = tmp_path / "out", tmp_path / "indexes"
    summary = run_qa_eval(slice_dataset, ALL_MODES, limit=QUESTIONS, out=out, index_root=index_root,
                          progress=False)
    run_dir = out / "hotpot_slice"
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(records) == QUESTIONS * len(ALL_MODES)
    assert not [r for r in records if r.get("error")]
    assert set(summary) == set(ALL_MODES)
    for mode in ("plain", "crag", "crag-multihop", "langchain-ensemble"):
        metrics = summary[mode]["metrics"]
        assert metrics["R@10"] == 1.0, mode  # 26 passages: every gold document is ranked in the top 10
        assert metrics["InContext"] >= 0.5, mode  # the gold answer reaches the answerer
    answered = [r for r in records if not r.get("abstained")]
    assert answered, "every mode abstained on every question"
    for record in answered:  # the reader's short answer: one span, then its citation
        assert re.fullmatch(r"[^\[\]]{1,200} \[\d+\]", record["answer"]), record
    crag_stages = summary["crag"]["stages"]
    assert {"retrieve", "rerank", "grade", "refine", "select", "answer"} <= set(crag_stages)
    assert "execute" in summary["crag-multihop"]["stages"] or "retrieve" in summary["crag-multihop"]["stages"]
    assert set(summary["binary-crag"]["stages"]) == {"retrieve", "grade", "answer"}
    assert set(summary["gold-passages"]["stages"]) == {"answer"}  # no retrieval: it reads the gold documents
    for record in (r for r in records if r["mode"] == "gold-passages"):
        assert set(record["ranked_doc_ids"]) == set(record["gold_ids"]), record
    report = json.loads((run_dir / "report.json").read_text())
    assert report["machine"]["packages"]["langgraph"] and report["settings"]["modes"] == list(ALL_MODES)
    assert "| mode | EM | F1 |" in (run_dir / "report.md").read_text()
    for png in ("recall_at_k.png", "latency_by_stage.png"):
        assert (run_dir / png).read_bytes()[:4] == b"\x89PNG"

    # a second run with the same settings answers nothing again and reports the same numbers
    again = run_qa_eval(slice_dataset, ALL_MODES, limit=QUESTIONS, out=out, index_root=index_root,
                        progress=False, plots=False)
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == QUESTIONS * len(ALL_MODES)
    assert again["crag"]["metrics"]["F1"] == summary["crag"]["metrics"]["F1"]


def test_peers_retrieve_gold_from_the_same_bundle(slice_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from cragraph_lab.datasets import load_dataset
    from cragraph_lab.peers import LangChainEnsemble, RankBM25
    from cragraph_lab.retrieval import dataset_index

    dataset = load_dataset(slice_dataset)
    bundle = dataset_index(dataset, "e5-small", tmp_path / "indexes", progress=False)
    for peer in (LangChainEnsemble(bundle), RankBM25(bundle)):
        found = 0
        for question in dataset.questions:
            hits = peer.search(question.question, k=5)
            assert len(hits) == 5 and len({h.chunk.id for h in hits}) == 5
            found += bool(set(question.supporting_ids) & {h.chunk.doc_id for h in hits})
        assert found == len(dataset.questions), peer.name
