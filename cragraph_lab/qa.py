"""`python -m cragraph_lab eval qa`: end-to-end QA over a normalized dataset, our modes and peers in one run.

Every mode answers the same questions from the same index with the same embedder and evaluator:

- plain: hybrid retrieval, top-k passages straight to the answer node (no grading, refinement or selection)
- crag: the CRAG graph, single-hop only (Context.multihop="never")
- crag-multihop: the CRAG graph with the multi-hop planner routed automatically (multihop="auto")
- langchain-ensemble, rank-bm25: peer retrievers (bench.peers), top-k to the same answer node
- binary-crag: the LangGraph-tutorial CRAG: hybrid top-k, a yes / no grade per passage, "no" passages dropped
  (and the question flagged for web search, which is off in benchmarks), no strips, same answer node
- gold-passages: a reference, not a system: the question's gold documents (as the index holds them) straight to
  the same answer node, so its row is what the answer step reaches when retrieval and the CRAG decision are
  perfect; an unanswerable question's gold documents are not in its index, so this row abstains on it

Our three modes also run with any `provider:model` chat model given (`<mode>@<model>`, LLM-written answers).
The embedded model answers extractively.

Truthfulness: with `unanswerable` > 0 that share of the questions (seeded) is asked of an index without their
gold passages (bench.unanswerable), and Truth / Halluc / Abstain are reported overall and split answerable /
unanswerable. With `web_standin` the removed passages (and the rest of the corpus as distractors) are served by
a Tavily-compatible stand-in on 127.0.0.1 that our CRAG modes search through their web branch.

Each finished (mode, question) is appended to results.jsonl at once; a rerun with the same settings skips what
is there, so an interrupted run resumes.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from cragraph.evaluation.qa_metrics import aggregate, by_type, recall_curve, score_record, stage_latency
from cragraph_lab.datasets import Dataset, Question, load_dataset
from cragraph_lab.paired import against_baseline, captioned, difference_table

OUR_MODES = ("plain", "crag", "crag-multihop")
PEER_MODES = ("langchain-ensemble", "rank-bm25", "binary-crag")
REFERENCE_MODES = ("gold-passages",)
ALL_MODES = OUR_MODES + PEER_MODES + REFERENCE_MODES
TABLE_COLUMNS = ("EM", "F1", "Contains", "SemMatch", "InContext", "CtxChars", "CitePrec", "Abstain", "Truth",
                 "Halluc", "R@5", "p50_ms", "p95_ms")
TRUTH_COLUMNS = ("Truth", "Halluc", "Abstain", "Contains")
RANKED_KEPT = 10
PACKAGES = ("langgraph", "langchain-core", "langchain-classic", "langchain-community", "sentence-transformers",
            "transformers", "torch", "faiss-cpu", "rank-bm25", "numpy", "matplotlib")

# A mode answers one question and returns its record fields (see `record_for`).
ModeRunner = Callable[[str], dict[str, Any]]


@dataclass
class QASettings:
    """What must match for a rerun to resume from an earlier run's results."""

    dataset: str
    embedder: str = "e5-small"
    k: int = 5
    chat_models: list[str] = field(default_factory=list)
    binary_cut: float = 0.0
    context_overrides: dict[str, Any] = field(default_factory=dict)
    offset: int = 0
    unanswerable: float = 0.0
    seed: int = 13
    web_standin: bool = False

    def fingerprint(self) -> dict[str, Any]:
        """The settings as a dict; options at their defaults are left out, so runs from before they existed
        still resume."""
        settings = asdict(self)
        for name, default in (("offset", 0), ("unanswerable", 0.0), ("web_standin", False)):
            if settings[name] == default:
                settings.pop(name)
        if not self.unanswerable:
            settings.pop("seed")
        return settings


def expand_modes(modes: Sequence[str], chat_models: Sequence[str]) -> list[str]:
    """The requested modes, plus `<our mode>@<chat model>` for every chat model given."""
    unknown = [m for m in modes if m not in ALL_MODES]
    if unknown:
        raise ValueError(f"unknown QA modes {unknown}; expected some of {', '.join(ALL_MODES)}")
    expanded = list(modes)
    for model in chat_models:
        expanded += [f"{m}@{model}" for m in modes if m in OUR_MODES]
    return expanded


def mode_context(index: str, mode: str, overrides: dict[str, Any] | None = None) -> Any:
    """The graph Context of a mode: web off, multihop per mode, an LLM answer for `<mode>@<provider:model>`."""
    from rag.context import Context

    base, _, chat_model = mode.partition("@")
    settings: dict[str, Any] = {"index": index, "web_search": False, **(overrides or {})}
    settings["multihop"] = "auto" if base == "crag-multihop" else "never"
    if chat_model:
        settings.update(chat_model=chat_model, llm_answer=True)
    return Context(**settings)


def build_runners(bundle: Any, modes: Sequence[str], settings: QASettings,
                  gold: Mapping[str, Sequence[str]]) -> dict[str, ModeRunner]:
    """One runner per mode over `bundle`; `gold` maps each question to its gold document ids (gold-passages)."""
    from cragraph_lab.peers import LangChainEnsemble, RankBM25
    from rag.retrieval.retriever import HybridRetriever

    for chat_model in settings.chat_models:  # a bad spec or a missing provider package fails before the run
        from models.chat import load_chat_model

        load_chat_model(chat_model)
    retriever = HybridRetriever(bundle)
    index = str(bundle.path)
    runners: dict[str, ModeRunner] = {}
    for mode in modes:
        base = mode.partition("@")[0]
        context = mode_context(index, mode, settings.context_overrides)
        if base in ("crag", "crag-multihop"):
            runners[mode] = graph_runner(context)
        elif base == "plain":
            runners[mode] = retrieve_and_answer(retriever.search, context, settings.k)
        elif base == "langchain-ensemble":
            runners[mode] = retrieve_and_answer(LangChainEnsemble(bundle).search, context, settings.k)
        elif base == "rank-bm25":
            runners[mode] = retrieve_and_answer(RankBM25(bundle).search, context, settings.k)
        elif base == "binary-crag":
            runners[mode] = binary_crag(retriever.search, context, settings.k, settings.binary_cut)
        elif base == "gold-passages":
            runners[mode] = gold_passages(retriever, gold, context)
    return runners


def graph_runner(context: Any) -> ModeRunner:
    """The compiled CRAG graph, streamed so the passages each stage hands on are seen (not only the output)."""
    from graph import graph

    def run(question: str) -> dict[str, Any]:
        state: dict[str, Any] = {}
        trace: list[dict[str, Any]] = []
        for chunk in graph.stream({"question": question}, context=context, stream_mode="updates"):
            for update in chunk.values():
                if update:
                    trace += update.get("trace", [])
                    state.update({key: value for key, value in update.items() if key != "trace"})
        ranked = [passage_doc_id(p) for key in ("evidence_hits", "candidates", "hits") for p in state.get(key, [])]
        return {
            "answer": state.get("answer", ""),
            "abstained": bool(state.get("abstained", True)),
            "cited_doc_ids": [c.get("doc_id") for c in state.get("citations", [])],
            "context": [p["text"] for p in state.get("selected", [])],
            "ranked_doc_ids": list(dict.fromkeys(d for d in ranked if d))[:RANKED_KEPT],
            "stages": stage_durations(trace),
            **answer_scores(trace, state),
            "verdict": state.get("verdict"),
            "route": state.get("route"),
        }
    return run


def passage_doc_id(passage: dict[str, Any]) -> str | None:
    """The document of a passage dict, or of a Hit.to_dict() record (the multi-hop evidence)."""
    return passage.get("doc_id") or (passage.get("chunk") or {}).get("doc_id")


def retrieve_and_answer(search: Callable[..., list[Any]], context: Any, k: int) -> ModeRunner:
    """Plain RAG over any retriever: its top-k passages go straight to the graph's answer node."""
    from langgraph.runtime import Runtime

    from nodes.answer import answer
    from rag.knowledge.passages import passage_of
    from rag.state import StageTimer

    runtime = Runtime(context=context)

    def run(question: str) -> dict[str, Any]:
        timer = StageTimer("retrieve")
        hits = search(question, k=max(k, RANKED_KEPT))
        retrieved = timer.record("retrieved", {"hits": len(hits)})
        passages = [passage_of(h) for h in hits[:k]]
        update = answer({"question": question, "selected": passages}, runtime)
        return answered_record(update, passages, [h.chunk.doc_id for h in hits], [retrieved, *update["trace"]])
    return run


def binary_crag(search: Callable[..., list[Any]], context: Any, k: int, cut: float) -> ModeRunner:
    """The LangGraph tutorial's CRAG: grade each of the top-k yes / no, drop the "no"s; any "no" means web."""
    from langgraph.runtime import Runtime

    from cragraph_lab.peers import binary_grade
    from nodes.answer import answer
    from nodes.grade import grade
    from rag.knowledge.passages import passage_of
    from rag.state import StageTimer

    runtime = Runtime(context=context)

    def run(question: str) -> dict[str, Any]:
        timer = StageTimer("retrieve")
        hits = search(question, k=max(k, RANKED_KEPT))
        retrieved = timer.record("retrieved", {"hits": len(hits)})
        graded = grade({"question": question, "candidates": [passage_of(h) for h in hits[:k]]}, runtime)
        keep = binary_grade(graded["grades"], cut)
        relevant = [p for p, yes in zip(graded["candidates"], keep, strict=True) if yes]
        update = answer({"question": question, "selected": relevant}, runtime)
        record = answered_record(update, relevant, [h.chunk.doc_id for h in hits],
                                 [retrieved, *graded["trace"], *update["trace"]])
        record["web_needed"] = not all(keep)  # the tutorial would search the web; web is off in benchmarks
        return record
    return run


def gold_passages(retriever: Any, gold: Mapping[str, Sequence[str]], context: Any) -> ModeRunner:
    """The answer step's ceiling: every chunk of the question's gold documents that the retriever's index holds
    (read whole, as the full-document route reads them), straight to the graph's answer node (the same node and
    gates as plain)."""
    from langgraph.runtime import Runtime

    from nodes.answer import answer
    from rag.knowledge.passages import passage_of
    from rag.retrieval.full_document import read_documents

    runtime = Runtime(context=context)

    def run(question: str) -> dict[str, Any]:
        passages = [passage_of(hit) for hit in read_documents(retriever, dict.fromkeys(gold.get(question, ()), 1.0))]
        update = answer({"question": question, "selected": passages}, runtime)
        return answered_record(update, passages, [p["doc_id"] for p in passages], update["trace"])
    return run


def answered_record(update: dict[str, Any], context: list[dict[str, Any]], ranked: list[str],
                    trace: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "answer": update.get("answer", ""),
        "abstained": bool(update.get("abstained")),
        "cited_doc_ids": [c.get("doc_id") for c in update.get("citations", [])],
        "context": [p["text"] for p in context],
        "ranked_doc_ids": list(dict.fromkeys(ranked))[:RANKED_KEPT],
        "stages": stage_durations(trace),
        **answer_scores(trace, update),
    }


def answer_scores(trace: Sequence[dict[str, Any]], state: dict[str, Any]) -> dict[str, Any]:
    """The answer's confidence and margin, its best evidence score, the grade of the passage it cites first, the
    best grade in its context and where the cited passage came from (index or web): what abstention is chosen from.
    An abstention keeps its reason and, when the reader's span was held back, that span's confidence and margin."""
    last: dict[str, Any] = next((r for r in reversed(trace) if r.get("node") == "answer"), {})
    counts = last.get("counts") or {}
    withheld = state.get("withheld") or {}
    citations = state.get("citations") or []
    cited = [c.get("id") for c in citations]
    selected = state.get("selected") or []
    grade = next((p.get("grade") for p in selected if cited and p.get("id") == cited[0]), None)
    grades = [p["grade"] for p in selected if p.get("grade") is not None]
    return {"confidence": state.get("confidence"), "margin": state.get("margin"),
            "best_evidence": counts.get("best_evidence"), "answer_grade": grade,
            "best_grade": max(grades) if grades and cited else None,
            "answer_source": citations[0].get("source") if citations else None,
            "withheld_confidence": withheld.get("confidence"), "withheld_margin": withheld.get("margin"),
            "abstain_reason": last.get("note") if state.get("abstained") else None,
            "candidates": last.get("candidates") or []}


def stage_durations(trace: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Milliseconds per node, summed when a node ran more than once (re-retrieval rounds)."""
    stages: dict[str, float] = {}
    for entry in trace:
        stages[entry["node"]] = round(stages.get(entry["node"], 0.0) + float(entry.get("duration_ms", 0.0)), 1)
    return stages


def record_for(mode: str, question: Question, fields: dict[str, Any], total_ms: float) -> dict[str, Any]:
    return {"mode": mode, "id": question.id, "question": question.question, "answers": question.answers,
            "gold_ids": question.supporting_ids, "type": question.meta.get("type"), **fields,
            "total_ms": round(total_ms, 1)}


class ResultsLog:
    """results.jsonl: one line per finished (mode, question), flushed as it is written; read back on resume."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[dict[str, Any]]:
        """Finished records; a last line cut short by an interruption is cut off, so that question reruns."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]
            with open(self.path, "r+b") as handle:
                handle.truncate(len(data))
        records = []
        for line in data.decode("utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a damaged line: that question runs again
        return records

    def append(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def check_resumable(out_dir: Path, settings: QASettings, fresh: bool) -> None:
    """Refuse to mix results of different settings in one results.jsonl (unless --fresh starts over)."""
    settings_file = out_dir / "settings.json"
    results = out_dir / "results.jsonl"
    if fresh:
        results.unlink(missing_ok=True)
    elif settings_file.exists() and results.exists():
        earlier = json.loads(settings_file.read_text(encoding="utf-8"))
        if earlier != settings.fingerprint():
            raise ValueError(f"{results} holds results of other settings ({earlier}); "
                             "use --fresh to start over or another --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(json.dumps(settings.fingerprint(), indent=2), encoding="utf-8")


def run_questions(dataset: Dataset, runners: dict[str, ModeRunner], log: ResultsLog,
                  progress: bool = True, reduced: dict[str, ModeRunner] | None = None,
                  unanswerable: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Answer every question with every mode not yet in the log, interleaved per question so machine noise
    hits all modes alike; one warm-up question per mode first (models load outside the timings). Vector caches are
    emptied before each answer, so later modes do not get the earlier modes' embeddings for free. Questions in
    `unanswerable` are answered by the `reduced` runners (an index without their gold passages)."""
    from rag.knowledge.vectors import forget_vectors

    records = log.load()
    done = {(r["mode"], r["id"]) for r in records}
    todo = [(q, m) for q in dataset.questions for m in runners if (m, q.id) not in done]
    if not todo:
        return records
    for mode in dict.fromkeys(m for _, m in todo):
        runners[mode](dataset.questions[0].question)
        if reduced and unanswerable:
            reduced[mode](dataset.questions[0].question)
    bar = tqdm(total=len(dataset.questions) * len(runners), initial=len(dataset.questions) * len(runners)
               - len(todo), desc=f"qa {dataset.name}", unit="answer", disable=not progress)
    for question, mode in todo:
        forget_vectors()  # no mode reuses the query or sentence vectors an earlier mode computed
        started = time.perf_counter()
        removed = question.id in unanswerable
        try:
            fields = (reduced if removed and reduced else runners)[mode](question.question)
        except Exception as error:  # one failing question must not lose the run; it is counted and reported
            fields = {"answer": "", "abstained": True, "error": f"{type(error).__name__}: {error}"}
        record = record_for(mode, question, fields, (time.perf_counter() - started) * 1000)
        if removed:
            record["unanswerable"] = True
        log.append(record)
        records.append(record)
        bar.update(1)
    bar.close()
    return records


def summarize(records: Sequence[dict[str, Any]], modes: Sequence[str], judge: Any | None,
              question_ids: set[str]) -> dict[str, dict[str, Any]]:
    """Per mode: mean metrics, recall@k curve, stage latency, per-type metrics and, for every mode but plain, the
    paired difference against plain (bench.paired); only this run's questions."""
    kept = [r for r in records if r["mode"] in modes and r["id"] in question_ids]
    for record in kept:
        record["scores"] = score_record(record)
    if judge is not None:
        pairs = [("" if r.get("abstained") else r.get("answer", ""), r["answers"]) for r in kept]
        for record, cosine in zip(kept, judge.similarities(pairs), strict=True):
            record["scores"]["SemCos"] = round(cosine, 4)
            record["scores"]["SemMatch"] = float(cosine >= judge.threshold_for(record["answers"]))
    summary = {}
    for mode in modes:
        rows = [r for r in kept if r["mode"] == mode]
        summary[mode] = {"metrics": aggregate(rows), "recall_curve": recall_curve(rows),
                         "stages": stage_latency(rows), "by_type": by_type(rows),
                         "errors": sum(1 for r in rows if r.get("error")),
                         "web_needed": sum(1 for r in rows if r.get("web_needed"))}
        if any(r.get("unanswerable") for r in rows):
            summary[mode]["answerable"] = aggregate([r for r in rows if not r.get("unanswerable")])
            summary[mode]["unanswerable"] = aggregate([r for r in rows if r.get("unanswerable")])
    for mode, paired in against_baseline(kept, modes).items():
        summary[mode]["against_plain"] = paired
    return summary


def markdown_table(summary: dict[str, dict[str, Any]], columns: Sequence[str] = TABLE_COLUMNS) -> str:
    lines = ["| mode | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for mode, result in summary.items():
        lines.append(f"| {mode} | " + " | ".join(_cell(c, result["metrics"].get(c)) for c in columns) + " |")
    return "\n".join(lines)


def truth_table(summary: dict[str, dict[str, Any]]) -> str:
    """Truth / Halluc / Abstain / Contains overall and on the answerable and unanswerable questions apart."""
    if not any("unanswerable" in result for result in summary.values()):
        return ""
    parts = ("overall", "answerable", "unanswerable")
    header = " | ".join(f"{c} ({part})" for part in parts for c in TRUTH_COLUMNS)
    lines = [f"| mode | {header} |", "|---" * (1 + len(parts) * len(TRUTH_COLUMNS)) + "|"]
    for mode, result in summary.items():
        groups = [result["metrics"], result.get("answerable", {}), result.get("unanswerable", {})]
        cells = [_cell(c, group.get(c)) for group in groups for c in TRUTH_COLUMNS]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(summary: dict[str, dict[str, Any]]) -> str:
    """Our modes against each peer: quality ratios (F1, Contains, SemMatch) and the latency ratio (p50)."""
    ours = [m for m in summary if m.partition("@")[0] in OUR_MODES]
    peers = [m for m in summary if m in PEER_MODES]
    lines = ["| ours | vs peer | F1 x | Contains x | SemMatch x | p50 latency x |", "|---|---|---|---|---|---|"]
    for mode in ours:
        for peer in peers:
            a, b = summary[mode]["metrics"], summary[peer]["metrics"]
            cells = [_ratio(a.get(c), b.get(c)) for c in ("F1", "Contains", "SemMatch", "p50_ms")]
            lines.append(f"| {mode} | {peer} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def type_table(summary: dict[str, dict[str, Any]]) -> str:
    types = sorted({t for result in summary.values() for t in result["by_type"]})
    if not types:
        return ""
    lines = ["| mode | type | questions | EM | F1 | Contains | SemMatch | InContext | R@5 |", "|---" * 9 + "|"]
    for mode, result in summary.items():
        for name in types:
            m = result["by_type"].get(name)
            if m:
                lines.append(f"| {mode} | {name} | {m['questions']} | " + " | ".join(
                    _cell(c, m.get(c)) for c in ("EM", "F1", "Contains", "SemMatch", "InContext", "R@5")) + " |")
    return "\n".join(lines)


def stage_table(summary: dict[str, dict[str, Any]]) -> str:
    lines = ["| mode | stage | runs | p50_ms | p95_ms |", "|---|---|---|---|---|"]
    for mode, result in summary.items():
        for stage, values in result["stages"].items():
            lines.append(f"| {mode} | {stage} | {values['runs']} | {values['p50_ms']:.1f} | {values['p95_ms']:.1f} |")
    return "\n".join(lines)


def _cell(column: str, value: float | None) -> str:
    if value is None or value != value:  # None or NaN
        return "-"
    if column == "CtxChars":
        return f"{value:.0f}"
    return f"{value:.1f}" if column.endswith("_ms") else f"{value:.3f}"


def _ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or not theirs or ours != ours or theirs != theirs:
        return "-"
    return f"{ours / theirs:.2f}"


def cpu_model() -> str | None:
    """The CPU's marketing name from /proc/cpuinfo (Linux); None where there is none to read."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith(("model name", "hardware")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def memory_gib() -> float | None:
    """Physical memory in GiB (POSIX sysconf), None where the platform does not say."""
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (AttributeError, ValueError, OSError):
        return None


def environment() -> dict[str, Any]:
    """Versions and machine, so a reader can tell which run they look at."""
    versions: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parents[1], timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"python": platform.python_version(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "cpu_model": cpu_model(),
            "cpu_count": os.cpu_count(), "memory_gib": memory_gib(), "os": f"{platform.system()} {platform.release()}",
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "git_commit": commit, "packages": versions}


def run_qa_eval(dataset_dir: str | Path, modes: Sequence[str] = ALL_MODES, limit: int | None = None,
                out: Path | None = None, chat_models: Sequence[str] = (), embedder: str = "e5-small",
                k: int = 5, index_root: Path | None = None, reuse_index: bool = False, fresh: bool = False,
                plots: bool = True, semantic_threshold: float | dict[str, float] | None = None,
                progress: bool = True, offset: int = 0, context_overrides: dict[str, Any] | None = None,
                fresh_on_index_change: bool = False, unanswerable: float = 0.0, seed: int = 13,
                web_standin: bool = False) -> dict[str, dict[str, Any]]:
    """Run the QA benchmark; writes results.jsonl, report.json, report.md and PNG plots under `out`.

    `offset` skips the first questions (a calibration slice disjoint from the reported ones);
    `context_overrides` change the graph Context of every mode (e.g. the evaluator and its thresholds) and are
    part of the settings a rerun must match; `semantic_threshold` is one cut or a cut per answer script.
    An index whose document or chunk count changed since the last report makes the earlier results stale:
    refused, or discarded with `fresh_on_index_change`. `unanswerable` (0..1) and `web_standin`: the module
    docstring's truthfulness benchmark."""
    from cragraph_lab.retrieval import dataset_index
    from cragraph_lab.semantic_match import SemanticJudge
    from cragraph_lab.unanswerable import choose_unanswerable, reduced_index, removed_documents

    if web_standin and not unanswerable:
        raise ValueError("--web-standin serves the gold passages removed by --unanswerable: give both")
    dataset = load_dataset(dataset_dir, limit=limit, offset=offset)
    unanswerable_ids = choose_unanswerable(dataset.questions, unanswerable, seed)
    out_dir = Path(out or Path("runs") / "qa") / dataset.name.replace("/", "__")
    settings = QASettings(dataset=dataset.name, embedder=embedder, k=k, chat_models=list(chat_models),
                          context_overrides=dict(context_overrides or {}), offset=offset,
                          unanswerable=unanswerable, seed=seed, web_standin=web_standin)
    check_resumable(out_dir, settings, fresh)
    bundle = cached_index(dataset, embedder, index_root) if reuse_index else \
        dataset_index(dataset, embedder, index_root, progress)
    if index_changed(out_dir, bundle.manifest["counts"]):
        if not fresh_on_index_change:
            raise ValueError(f"{out_dir} holds results on an index of other size than {bundle.path} now has; "
                             "use --fresh to start over")
        (out_dir / "results.jsonl").unlink(missing_ok=True)
    all_modes = expand_modes(modes, chat_models)
    removed = removed_documents(dataset.questions, unanswerable_ids)
    gold = {q.question: q.supporting_ids for q in dataset.questions}
    started = time.time()
    with web_standin_for(dataset, removed, enabled=web_standin) as web:
        run_settings = settings if web is None else replace(
            settings, context_overrides={**settings.context_overrides, **web})
        runners = build_runners(bundle, all_modes, run_settings, gold)
        reduced = build_runners(reduced_index(dataset, removed, embedder, index_root, progress), all_modes,
                                run_settings, gold) if removed else None
        records = run_questions(dataset, runners, ResultsLog(out_dir / "results.jsonl"), progress, reduced,
                                unanswerable_ids)
    judge = SemanticJudge(bundle.embedder, semantic_threshold)
    summary = summarize(records, all_modes, judge, {q.id for q in dataset.questions})
    report = {
        "dataset": dataset.name, "questions": len(dataset.questions),
        "index": {"path": str(bundle.path), **bundle.manifest["counts"], "embedder": bundle.settings.embedder,
                  "reused_as_is": reuse_index},
        "settings": {**settings.fingerprint(), "modes": all_modes, "semantic_thresholds": judge.thresholds,
                     "limit": limit, "offset": offset, "unanswerable": unanswerable, "seed": seed,
                     "unanswerable_questions": len(unanswerable_ids), "removed_documents": len(removed),
                     "web_standin": web_standin},
        "machine": environment(),
        "wall_s_this_session": round(time.time() - started, 1),
        "modes": summary,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (out_dir / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    markdown = report_markdown(report)
    (out_dir / "report.md").write_text(markdown, encoding="utf-8")
    if plots:
        from cragraph_lab.plots import latency_plot, recall_plot

        recall_plot(summary, out_dir / "recall_at_k.png", title=dataset.name)
        latency_plot(summary, out_dir / "latency_by_stage.png", title=dataset.name)
    print(markdown)
    print(f"\nwrote {out_dir}")
    return summary


@contextmanager
def web_standin_for(dataset: Dataset, removed: set[str], enabled: bool) -> Iterator[dict[str, Any] | None]:
    """With `enabled`: a Tavily-compatible stand-in on 127.0.0.1 serving the whole corpus (the removed gold
    passages among the rest as distractors), TAVILY_API_KEY set to its key and the operator's [web] base_url to
    it while it runs; yields the Context fields that switch our CRAG modes' web branch on. Otherwise None."""
    if not enabled:
        yield None
        return
    import secrets

    from cragraph_lab.unanswerable import corpus_rows
    from cragraph_lab.web_standin import WebStandin

    key = f"standin-{secrets.token_hex(8)}"
    previous = os.environ.get("TAVILY_API_KEY")
    os.environ["TAVILY_API_KEY"] = key
    try:
        from rag.config import operator_config

        with WebStandin(corpus_rows(dataset), api_key=key) as standin, operator_config(web={"base_url": standin.url}):
            yield {"web_search": True}
    finally:
        if previous is None:
            os.environ.pop("TAVILY_API_KEY", None)
        else:
            os.environ["TAVILY_API_KEY"] = previous


def index_changed(out_dir: Path, counts: dict[str, int]) -> bool:
    """True when the last report of `out_dir` was made on an index with other document / chunk counts."""
    report = out_dir / "report.json"
    if not report.exists() or not (out_dir / "results.jsonl").exists():
        return False
    earlier = json.loads(report.read_text(encoding="utf-8")).get("index", {})
    return any(key in earlier and earlier[key] != counts.get(key) for key in ("documents", "chunks"))


def cached_index(dataset: Dataset, embedder: str, index_root: Path | None) -> Any:
    """The dataset's cached index as it is, without bringing it up to date with the corpus."""
    from models.paths import cache_root
    from stores.bundle import IndexBundle

    root = index_root or cache_root() / "bench-indexes"
    return IndexBundle.open(root / f"{dataset.name.replace('/', '__')}--{embedder.replace('/', '__')}",
                            embedder=embedder)


def report_markdown(report: dict[str, Any]) -> str:
    summary = report["modes"]
    index = report["index"]
    machine = report["machine"]
    parts = [
        f"### {report['dataset']}: {report['questions']} questions, {index['chunks']} chunks "
        f"({index['documents']} documents), embedder {index['embedder']}",
        "",
        markdown_table(summary),
        "",
        "Our modes against each peer (ratios > 1: ours higher; latency > 1: ours slower):",
        "",
        ratio_table(summary),
    ]
    parts += captioned(difference_table(summary))
    truth = truth_table(summary)
    if truth:
        unanswerable = report["settings"].get("unanswerable", 0)
        web = "; their gold passages served by the web stand-in" if report["settings"].get("web_standin") else ""
        parts += ["", f"Truthfulness ({unanswerable:.0%} of the questions asked of an index without their gold "
                      f"passages{web}; correct +1, abstention 0, wrong -1):", "", truth]
    types = type_table(summary)
    if types:
        parts += ["", "Per question type:", "", types]
    parts += ["", "Latency by stage:", "", stage_table(summary), "",
              f"Machine: {machine['processor']}, {machine['cpu_count']} CPUs, OMP_NUM_THREADS="
              f"{machine['omp_num_threads']}, Python {machine['python']}, commit {machine['git_commit']}."]
    errors = {m: r["errors"] for m, r in summary.items() if r["errors"]}
    if errors:
        parts.append(f"Questions that raised (counted as abstentions): {errors}.")
    return "\n".join(parts) + "\n"
