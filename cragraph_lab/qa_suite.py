"""`python -m cragraph_lab eval qa-suite`: the whole QA benchmark in one command, and the results
pages generated from it.

It answers (resuming) every set of the suite with every mode and peer (cragraph_lab/qa.py), after calibrating the
semantic-match judge on a DISJOINT labelled slice: the `calibration` questions after the reported ones, answered
by `plain` only and labelled as cragraph_lab/semantic_match.py does. Sets with no questions after the reported ones (
hotpotqa_migres200 has exactly 200) contribute nothing to the slice; their answer script is calibrated on the
other sets' pairs of the same script (English on XQuAD en and NQ).

Then it renders its results page, runs/qa/qa_results.md by default (the metric explanations are the template text
below; every table, the losses to peers, the machine, the command and the date come from the runs' report.json
files; the "why" prose comes from the hand-written cragraph_lab/notes/qa_results_notes.md, dated history), and,
with `--readme FILE`, the section of FILE between the markers `<!-- qa-results:start -->` and
`<!-- qa-results:end -->`. The docs' own tables come from cragraph_lab/measure.sh and cragraph_lab/tables.py, so
by default the suite writes under runs/ only. `--render-only` does the rendering alone from finished runs,
loading no model. The command's options are parsed in cragraph_lab/cli/qa.py into a SuiteConfig.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cragraph_lab.paired import PAIRED_METRICS, captioned, difference_cell, difference_table
from cragraph_lab.qa import (
    ALL_MODES,
    OUR_MODES,
    PEER_MODES,
    TABLE_COLUMNS,
    markdown_table,
    ratio_table,
    stage_table,
    type_table,
)

# XQuAD: only the held-back half of its passages (the reader trains on the other half); written on first use
SUITE_SETS = ("hotpotqa_migres200", "xquad_heldout/en", "xquad_heldout/ru", "xquad_heldout/zh",
              "xquad_heldout/zh_hant", "nq_open_oracle_litm")
HELDOUT = "xquad_heldout/"
REPORTED = 200
CALIBRATION = 60
README_START = "<!-- qa-results:start -->"
README_END = "<!-- qa-results:end -->"
CALIBRATION_FILE = "semantic_calibration.json"
PLOTS = ("recall_at_k", "latency_by_stage")
LOWER_IS_BETTER = frozenset({"Halluc", "p50_ms", "p95_ms"})
# Descriptive columns, neither better nor worse in themselves: abstaining costs EM and spares Truth, which count it
NOT_COMPARED = frozenset({"Abstain", "CtxChars"})
SUMMARY_COLUMNS = ("EM", "Truth", "p50_ms")
SUMMARY_HEADER = "EM / Truth / median ms per question:"


@dataclass
class SuiteConfig:
    """Everything the suite runs and writes; defaults are the published run."""

    data_root: Path = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    sets: Sequence[str] = SUITE_SETS
    limit: int = REPORTED
    calibration: int = CALIBRATION
    modes: Sequence[str] = ALL_MODES
    out: Path = Path("runs/qa")
    docs: Path = Path("runs/qa/qa_results.md")
    notes: Path = Path("cragraph_lab/notes/qa_results_notes.md")
    readme: Path | None = None  # a page with the qa-results markers to refresh; none by default
    embedder: str = "e5-small"
    k: int = 5
    index_root: Path | None = None
    plots: bool = True
    fresh: bool = False  # discard earlier results (e.g. after the graph's code or defaults changed)

    def run_dir(self, name: str) -> Path:
        return self.out / name.replace("/", "__")

    def folder(self, name: str) -> Path:
        """The set's folder: under data_root, or for XQuAD's held-back half the cached folder written from it."""
        if not name.startswith(HELDOUT):
            return self.data_root / name
        from cragraph_lab.training_data import default_out_root, write_xquad_heldout

        folder = default_out_root() / name
        if not (folder / "questions.jsonl").is_file():
            write_xquad_heldout(self.data_root, default_out_root())
        return folder


@dataclass(frozen=True)
class Loss:
    """One metric where one of our rows is worse than one peer row on one set."""

    ours: str
    metric: str
    ours_value: float
    peer: str
    peer_value: float


# --------------------------------------------------------------------------------------------------- running


def calibrate_semantic(config: SuiteConfig, progress: bool = True) -> dict[str, Any]:
    """Answer the calibration slice of every set with `plain`, fit a semantic-match cut per answer script on
    the labelled pairs (one group per set, so negatives stay in-set), write and return the calibration."""
    from cragraph_lab.datasets import load_dataset
    from cragraph_lab.qa import ResultsLog, run_qa_eval
    from cragraph_lab.semantic_match import DEFAULT_THRESHOLDS, SemanticJudge, calibrate
    from models.embedder import load_embedder

    calibration_out = config.out / "calibration"
    groups, contributed = [], {}
    for name in config.sets:
        folder = config.folder(name)
        ids = {q.id for q in load_dataset(folder, limit=config.calibration, offset=config.limit).questions}
        contributed[name] = len(ids)
        if not ids:
            continue
        run_qa_eval(folder, ["plain"], limit=config.calibration, offset=config.limit, out=calibration_out,
                    embedder=config.embedder, k=config.k, index_root=config.index_root, plots=False,
                    progress=progress, fresh=config.fresh, fresh_on_index_change=True)
        log = ResultsLog(calibration_out / name.replace("/", "__") / "results.jsonl")
        groups.append([r for r in log.load() if r["mode"] == "plain" and r["id"] in ids])
    per_script = calibrate(groups, SemanticJudge(load_embedder(config.embedder))) if groups else {}
    thresholds = {script: result["threshold"] for script, result in per_script.items()}
    fallback = {s: t for s, t in DEFAULT_THRESHOLDS.items() if s not in thresholds}
    calibration = {"offset": config.limit, "size": config.calibration, "mode": "plain",
                   "questions_per_set": contributed, "per_script": per_script,
                   "thresholds": {**fallback, **thresholds}, "fallback_scripts": sorted(fallback)}
    config.out.mkdir(parents=True, exist_ok=True)
    (config.out / CALIBRATION_FILE).write_text(json.dumps(calibration, indent=2), encoding="utf-8")
    return calibration


def run_suite(config: SuiteConfig, render_only: bool = False, progress: bool = True,
              command: str | None = None) -> Path:
    """Run (resuming) every set with the calibrated judge unless `render_only`, then render the pages."""
    if not render_only:
        from cragraph_lab.qa import run_qa_eval

        missing = [name for name in config.sets if not (config.folder(name) / "questions.jsonl").is_file()]
        if missing:
            raise FileNotFoundError(f"suite sets not found under {config.data_root}: {', '.join(missing)}")
        thresholds = calibrate_semantic(config, progress)["thresholds"]
        for name in config.sets:
            run_qa_eval(config.folder(name), list(config.modes), limit=config.limit, out=config.out,
                        embedder=config.embedder, k=config.k, index_root=config.index_root, plots=config.plots,
                        semantic_threshold=thresholds, progress=progress, fresh=config.fresh,
                        fresh_on_index_change=True)
    return render(config, command or suite_command(config))


# ------------------------------------------------------------------------------------------------- analysis


def losses(summary: dict[str, dict[str, Any]], columns: Sequence[str] = TABLE_COLUMNS) -> list[Loss]:
    """Every (our row, metric, peer row) where ours is worse, at the three decimals the tables print
    (higher is better except for hallucination and latency; abstention and context size are not compared)."""
    found = []
    ours = [m for m in summary if m.partition("@")[0] in OUR_MODES]
    peers = [m for m in summary if m in PEER_MODES]
    for mode in ours:
        for metric in (c for c in columns if c not in NOT_COMPARED):
            mine = _rounded(summary[mode]["metrics"].get(metric))
            for peer in peers:
                theirs = _rounded(summary[peer]["metrics"].get(metric))
                if mine is None or theirs is None:
                    continue
                worse = mine > theirs if metric in LOWER_IS_BETTER else mine < theirs
                if worse:
                    found.append(Loss(mode, metric, mine, peer, theirs))
    return found


def _rounded(value: float | None) -> float | None:
    if value is None or value != value:
        return None
    return round(float(value), 3)


def loss_lines(found: Sequence[Loss]) -> list[str]:
    """One bullet per (our row, metric): its value, then every peer that beats it with theirs."""
    grouped: dict[tuple[str, str], list[Loss]] = {}
    for loss in found:
        grouped.setdefault((loss.ours, loss.metric), []).append(loss)
    lines = []
    for (mode, metric), items in grouped.items():
        sign = ">" if metric in LOWER_IS_BETTER else "<"
        peers = ", ".join(f"{item.peer} {_number(metric, item.peer_value)}" for item in items)
        lines.append(f"- {mode} {metric} {_number(metric, items[0].ours_value)} {sign} {peers}")
    return lines


def _number(metric: str, value: float) -> str:
    return f"{value:.1f}" if metric.endswith("_ms") else f"{value:.3f}"


# ------------------------------------------------------------------------------------------------ rendering


def load_reports(config: SuiteConfig) -> dict[str, dict[str, Any]]:
    """report.json of every suite set that has one, in suite order."""
    reports = {}
    for name in config.sets:
        path = config.run_dir(name) / "report.json"
        if path.exists():
            reports[name] = json.loads(path.read_text(encoding="utf-8"))
    return reports


def load_calibration(config: SuiteConfig) -> dict[str, Any] | None:
    path = config.out / CALIBRATION_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def render(config: SuiteConfig, command: str) -> Path:
    """Write docs (and its plots) and the README section from the finished runs; returns the docs path."""
    reports = load_reports(config)
    if not reports:
        raise FileNotFoundError(f"no finished suite runs under {config.out} (expected <set>/report.json)")
    plots_dir = config.docs.parent / config.docs.stem
    plot_links = copy_plots(config, reports, plots_dir)
    notes = config.notes.read_text(encoding="utf-8").strip() if config.notes.exists() else \
        f"(no notes: write {config.notes} to explain the losses listed per set)"
    date = max(report.get("finished_at", "") for report in reports.values())[:10]
    docs_text = render_docs(reports, load_calibration(config), notes, command, date, plot_links,
                            missing=[name for name in config.sets if name not in reports])
    config.docs.parent.mkdir(parents=True, exist_ok=True)
    config.docs.write_text(docs_text, encoding="utf-8")
    if config.readme is not None and config.readme.exists():
        link = Path(os.path.relpath(config.docs.resolve(), config.readme.resolve().parent)).as_posix()
        section = render_readme_section(reports, command, link, date)
        config.readme.write_text(replace_between_markers(config.readme.read_text(encoding="utf-8"), section),
                                 encoding="utf-8")
    return config.docs


def copy_plots(config: SuiteConfig, reports: dict[str, dict[str, Any]], plots_dir: Path) -> dict[str, list[str]]:
    """Copy each run's PNGs to <docs stem>/<set>-<plot>.png; returns the relative links per set."""
    links: dict[str, list[str]] = {}
    for name in reports:
        for plot in PLOTS:
            source = config.run_dir(name) / f"{plot}.png"
            if source.exists():
                plots_dir.mkdir(parents=True, exist_ok=True)
                target = plots_dir / f"{name.replace('/', '__')}-{plot}.png"
                shutil.copyfile(source, target)
                links.setdefault(name, []).append(f"{plots_dir.name}/{target.name}")
    return links


def replace_between_markers(text: str, section: str) -> str:
    """`text` with only what lies between the README markers replaced by `section`."""
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < 0 or end < start:
        raise ValueError(f"README markers {README_START} ... {README_END} not found (in that order)")
    return text[: start + len(README_START)] + "\n" + section.strip() + "\n" + text[end:]


def short_name(name: str) -> str:
    return {"hotpotqa_migres200": "hotpotqa", "nq_open_oracle_litm": "NQ"}.get(
        name, name.replace("xquad_ru_zh_en/", "XQuAD ").replace(HELDOUT, "XQuAD held-out ").replace(
            "zh_hant", "zh traditional"))


def summary_table(reports: dict[str, dict[str, Any]], columns: Sequence[str] = SUMMARY_COLUMNS) -> str:
    """Rows: modes; columns: sets; cells: the given metrics joined by ' / '."""
    modes = list(dict.fromkeys(m for report in reports.values() for m in report["modes"]))
    lines = ["| mode | " + " | ".join(short_name(n) for n in reports) + " |", "|---" * (len(reports) + 1) + "|"]
    for mode in modes:
        cells = []
        for report in reports.values():
            metrics = report["modes"].get(mode, {}).get("metrics", {})
            cells.append(" / ".join(_cell(c, metrics.get(c)) for c in columns))
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired_summary_table(reports: dict[str, dict[str, Any]], only: Sequence[str] | None = None,
                         metrics: Sequence[str] = PAIRED_METRICS) -> str:
    """Rows: (mode, metric) for the modes compared with plain (those in `only`, when given); columns: sets; cells:
    paired difference [interval]."""
    modes = list(dict.fromkeys(m for report in reports.values() for m, r in report["modes"].items()
                               if r.get("against_plain") and (only is None or m in only)))
    if not modes:
        return ""
    lines = ["| mode | metric | " + " | ".join(short_name(n) for n in reports) + " |",
             "|---" * (len(reports) + 2) + "|"]
    for mode in modes:
        for metric in metrics:
            cells = [difference_cell(report["modes"].get(mode, {}).get("against_plain", {}).get(metric))
                     for report in reports.values()]
            lines.append(f"| {mode} | {metric} - plain | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _paired_block(reports: dict[str, dict[str, Any]], only: Sequence[str] | None = None) -> str:
    return "\n".join(["", *captioned(paired_summary_table(reports, only))])


def _cell(column: str, value: float | None) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.0f}" if column.endswith("_ms") else f"{value:.2f}"


def calibration_section(calibration: dict[str, Any] | None, reports: dict[str, dict[str, Any]]) -> str:
    if calibration is None:
        used = {json.dumps(r["settings"].get("semantic_thresholds"), sort_keys=True) for r in reports.values()}
        return ("No calibration slice was run for these results (`--render-only` over runs made without the "
                f"suite); the thresholds the runs used: {', '.join(sorted(used))}.")
    per_set = calibration["questions_per_set"]
    lines = [
        f"The thresholds were fit on a labelled slice DISJOINT from the reported questions: questions "
        f"{calibration['offset'] + 1}-{calibration['offset'] + calibration['size']} of each set, answered by "
        f"`{calibration['mode']}` only. Questions per set in the slice: "
        + ", ".join(f"{short_name(n)} {c}" for n, c in per_set.items()) + ".",
    ]
    empty = [short_name(n) for n, c in per_set.items() if not c]
    if empty:
        lines.append(f"{', '.join(empty)} has no questions after the reported ones, so its answer script is "
                     "calibrated on the other sets' pairs of that script (English: XQuAD en and NQ).")
    lines += ["", "| script | threshold | balanced accuracy | TPR | FPR | pairs | positives |",
              "|---|---|---|---|---|---|---|"]
    for script, result in calibration["per_script"].items():
        lines.append(f"| {script} | {result['threshold']:.3f} | {result['balanced_accuracy']:.3f} | "
                     f"{result['tpr']:.3f} | {result['fpr']:.3f} | {result['pairs']} | {result['positives']} |")
    if calibration.get("fallback_scripts"):
        lines.append(f"\nNo pairs for {', '.join(calibration['fallback_scripts'])}: the shipped defaults of "
                     "bench/semantic_match.py apply there.")
    return "\n".join(lines)


def machine_line(reports: dict[str, dict[str, Any]]) -> str:
    machine = next(iter(reports.values()))["machine"]
    packages = ", ".join(f"{name} {version}" for name, version in (machine.get("packages") or {}).items()
                         if version)
    memory = f"{machine['memory_gib']} GiB RAM" if machine.get("memory_gib") else "RAM not recorded"
    return (f"CPU {machine.get('cpu_model') or machine.get('processor') or 'not recorded'}, "
            f"{machine.get('cpu_count')} cores, {memory}, {machine.get('os') or machine.get('platform')}, "
            f"Python {machine.get('python')}, OMP_NUM_THREADS={machine.get('omp_num_threads')}, "
            f"commit {machine.get('git_commit') or 'not recorded'}; {packages}.")


def set_section(name: str, report: dict[str, Any], plot_links: Sequence[str]) -> str:
    summary = report["modes"]
    index = report["index"]
    thresholds = report["settings"].get("semantic_thresholds") or {}
    parts = [
        f"### {name} ({report['questions']} questions, {index['chunks']} chunks from {index['documents']} "
        f"documents)",
        "",
        markdown_table(summary),
        "",
        "SemMatch cut per answer script: " + ", ".join(f"{s} {t:.3f}" for s, t in thresholds.items()) + ".",
        "",
        "Against each peer (ratio of ours to theirs; latency > 1 means ours is slower):",
        "",
        ratio_table(summary),
    ]
    parts += captioned(difference_table(summary))
    found = loss_lines(losses(summary))
    parts += ["", "Where one of our rows is worse than a peer row (computed from the table above):", ""]
    parts += found or ["- nowhere: every row of ours is at least as good as every peer on every column"]
    types = type_table(summary)
    if types:
        parts += ["", "Per question type:", "", types]
    if plot_links:
        parts += ["", " ".join(f"![{Path(link).stem.rsplit('-', 1)[-1].replace('_', ' ')}]({link})"
                               for link in plot_links)]
    parts += ["", "<details><summary>Latency by stage</summary>", "", stage_table(summary), "", "</details>"]
    errors = {m: r["errors"] for m, r in summary.items() if r.get("errors")}
    if errors:
        parts += ["", f"Questions that raised (counted as abstentions): {errors}."]
    return "\n".join(parts)


def render_docs(reports: dict[str, dict[str, Any]], calibration: dict[str, Any] | None, notes: str,
                command: str, date: str, plot_links: dict[str, list[str]], missing: Sequence[str] = ()) -> str:
    """The whole results page: template text, then everything computed from the reports."""
    questions = sorted({r["questions"] for r in reports.values()})
    sections = [DOC_INTRO.format(command=command), DOC_MODES, DOC_METRICS,
                "### Semantic match calibration\n\n" + calibration_section(calibration, reports),
                "## Results\n\n"
                f"Generated by `{command}` on {date} from the runs' report.json files; "
                f"{'/'.join(str(q) for q in questions)} questions per set.\n\n"
                f"Machine: {machine_line(reports)}\n\n"
                + SUMMARY_HEADER + "\n\n" + summary_table(reports) + _paired_block(reports)]
    if missing:
        sections.append("Not run yet: " + ", ".join(missing) + ".")
    sections += [set_section(name, report, plot_links.get(name, [])) for name, report in reports.items()]
    sections += ["## Reading the results: where our modes lose, and why\n\n" + notes, DOC_NOT_MEASURED]
    return "# End-to-end QA results\n\n" + "\n\n".join(s.strip() for s in sections) + "\n"


def render_readme_section(reports: dict[str, dict[str, Any]], command: str, docs_link: str, date: str) -> str:
    counts = sorted({r["questions"] for r in reports.values()})
    return "\n".join([
        f"End-to-end QA on {len(reports)} sets ({'/'.join(str(c) for c in counts)} questions each): our plain "
        "hybrid RAG, CRAG and CRAG + multi-hop against LangChain's EnsembleRetriever, rank-bm25 and a "
        "tutorial-style binary-grader CRAG, all answering with the same answer node (the short-answer reader) at "
        "the shipped defaults, so the answer step's abstentions count (an abstention scores 0 in EM, 0 in Truth, "
        "a wrong answer -1 in Truth). The gold-passages row is a reference, not a system: the same answer node "
        "reading each question's gold documents. " + SUMMARY_HEADER,
        "",
        summary_table(reports) + _paired_block(reports, OUR_MODES),
        "",
        f"Per-set tables, plots, where we lose to a peer and why, the machine: [{docs_link}]({docs_link}) "
        f"(generated {date} by `{command}`; `--render-only` re-renders from finished runs).",
    ])


DOC_INTRO = """\
One command runs every mode and every peer of cragraph_lab/qa.py on every set of the suite, on the same questions, with
the same index, the same embedder (packaged multilingual-e5-small), the same relevance evaluator and the same
answer node (the short-answer reader), so the rows differ only in retrieval, grading and context handling; it
then generates this page and the README's results section. XQuAD is read from the held-back half of its passages
only (`xquad_heldout`, written from ../shared/data on first use), since the reader trains on the other half;
`zh traditional` is its Chinese set converted to traditional characters (questions, answers and passages, with
OpenCC), as a user who writes traditional Chinese would ask it of documents written the same way:

```bash
{command}
python -m cragraph_lab eval qa-suite --render-only  # re-render this page from finished runs
```

Each set's run lives in `runs/qa/<set>/`: `results.jsonl` (one line per finished mode x question, appended as it
finishes; a rerun with the same settings skips those lines, so an interrupted suite resumes), `report.json`
(settings, package versions, machine, every metric), `report.md` and two PNGs. The calibration slice is in
`runs/qa/calibration/` and its thresholds in `runs/qa/semantic_calibration.json`. The prose on why we lose
where we lose is hand-written in `cragraph_lab/notes/qa_results_notes.md`; everything else here is computed."""

MODE_ROWS = (
    ("plain", "hybrid retrieval (our BM25 + e5 with dynamic fusion), top-5 chunks straight to the answer node"),
    ("crag", "the CRAG graph, single-hop only (`multihop=\"never\"`): understand, route, retrieve, rerank, grade, "
             "refine / rewrite, select, answer"),
    ("crag-multihop", "the CRAG graph with the multi-hop planner routed automatically (`multihop=\"auto\"`)"),
    ("langchain-ensemble", "LangChain `EnsembleRetriever(BM25Retriever, FAISS)`, weights 0.5 / 0.5, FAISS over "
                           "the same stored e5 vectors, top-5 to the same answer node"),
    ("rank-bm25", "rank-bm25 `BM25Okapi` over our tokens (stemmed, CJK bigrams), top-5 to the same answer node"),
    ("binary-crag", "the LangGraph CRAG tutorial's shape: hybrid top-5, one yes / no grade per passage (our "
                    "evaluator cut at 0), \"no\" passages dropped, any \"no\" flags web search; no knowledge "
                    "strips"),
    ("gold-passages", "a reference, not a system: the question's gold documents straight to the same answer node "
                      "(what the answer step reaches when retrieval and the CRAG decision are perfect; it abstains "
                      "on a question asked of an index without them)"),
)

DOC_MODES = "## Modes and peers\n\n| row | what answers the question |\n|---|---|\n" + "\n".join(
    f"| {row} | {text} |" for row, text in MODE_ROWS) + """

Web search is off in every row (no network here), so the CRAG "incorrect" branch re-retrieves with a rewritten
query (escalating the retrieval tool) and otherwise abstains, and the binary grader's web fallback only records
that it would search. The answer is the short-answer reader's span (rag/reader: a trained span pointer on
e5-small, no LLM), cited by its passage, with the shipped defaults: the answer step reads the question several
ways and abstains when the best candidate's probability of being right (the calibrated decision, fitted on
training questions) is under `answer_threshold` (docs/answering.md), so EM here counts those abstentions as
misses. `python -m cragraph_lab eval qa --chat-model
provider:model` adds LLM-written rows for plain / crag / crag-multihop."""

DOC_METRICS = """\
## Metrics

- **EM, F1**: SQuAD normalization (lower case, no punctuation, no articles); F1 over tokens, over characters
  for Chinese (CMRC convention). Citation markers are removed first. An abstention scores 0.
- **Contains**: the normalized gold answer occurs in the answer (whole words; substring for Chinese), the
  NQ-open "accuracy" used for long answers.
- **SemMatch**: cos(answer, gold) on e5 >= a threshold calibrated per answer script (below).
- **InContext**: the gold answer occurs in the context handed to the answer node: the ceiling for extraction.
- **CtxChars**: characters of context handed to the answer node (mean per question).
- **CitePrec**: share of cited documents that are gold (questions without citations left out).
- **Abstain**: share of questions answered with the abstention message.
- **Truth, Halluc**: the CRAG benchmark's (Meta KDD Cup 2024) truthfulness score, the mean of +1 for a correct
  answer (Contains), 0 for an abstention and -1 for a wrong answer, and the share answered wrongly. These sets have
  only answerable questions; `python -m cragraph_lab eval qa --unanswerable 0.5` adds questions whose passages are gone.
- **R@k**: recall of gold documents in the ranked list each mode produced (CRAG: reranked candidates, then the
  rest of the retrieved pool; multi-hop: the plan's evidence), k = 1..10 in the plots.
- **p50_ms / p95_ms**: wall time per question in one warm process (one warm-up question per mode first);
  per stage from each node's `duration_ms` in the trace.
- **X - plain [low, high]**: a row against plain retrieval on the same questions, the mean of the per-question
  differences with its 95% bootstrap interval (the questions resampled 2,000 times, one draw for both rows). One
  question moves a 200-question mean by .005; an interval that holds 0 is no difference either way.

SemMatch labels: positives are (answer, own gold) pairs where the answer contains the gold (a label that does not
depend on the embedder), negatives pair each answer with the gold of another question of the same set; the cut
maximizing balanced accuracy is chosen per answer script (answers in digits or Latin letters count as `en`;
Chinese needs its own cut, e5 puts Chinese texts closer together). A false-positive rate of about a tenth means
SemMatch is a lenient judge beside the strict Contains, not ground truth."""

DOC_NOT_MEASURED = """\
## What is not measured here

- No `--chat-model` rows: this machine has no API access and the embedded 135M model writes unreliable answers.
- Web search is off in every row, so CRAG's `incorrect` branch can only re-retrieve or abstain; the web branch is
  measured with the stand-in (`python -m cragraph_lab eval qa --unanswerable 0.5 --web-standin`, docs/benchmarks.md).
- XQuAD is ordered by article, so its first questions come from a handful of articles; hotpotqa's questions are
  all "hard" bridge / comparison questions."""


# ---------------------------------------------------------------------------------------------- reproducing


def home_relative(path: Path) -> str:
    """`~/...` for a path under the home folder, so a generated page names no one machine's home."""
    try:
        return "~/" + Path(path).expanduser().resolve().relative_to(Path.home().resolve()).as_posix()
    except ValueError:
        return str(path)


def suite_command(config: SuiteConfig) -> str:
    """The command that reproduces `config`: options only where they differ from the defaults."""
    defaults = SuiteConfig()
    options = []
    for flag, value, default in (("--sets", ",".join(config.sets), ",".join(defaults.sets)),
                                 ("--limit", config.limit, defaults.limit),
                                 ("--calibration", config.calibration, defaults.calibration),
                                 ("--modes", ",".join(config.modes), ",".join(defaults.modes)),
                                 ("--out", config.out, defaults.out), ("--embedder", config.embedder,
                                                                       defaults.embedder),
                                 ("-k", config.k, defaults.k)):
        if value != default:
            options.append(f"{flag} {value}")
    if config.index_root is not None:
        options.append(f"--index-root {home_relative(config.index_root)}")
    return " ".join(["OMP_NUM_THREADS=1 python -m cragraph_lab eval qa-suite", *options])

