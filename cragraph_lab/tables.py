"""The docs' measured tables, rendered from one run of cragraph_lab/measure.sh.

    python -m cragraph_lab.tables OUTDIR [--old runs/measure-old] [--old-corpus runs/userlike-old] [--print]

Why: every number in README.md and docs/*.md must come from runs at one commit, each shown with its command. A
table lives between `<!-- table:NAME -->` and `<!-- /table:NAME -->`; everything between the two markers is
rewritten from OUTDIR (the commit and date measure.sh recorded, the commands it ran, then the table), and the
prose around them is left alone. A table whose runs are missing stops the rendering before any page is written,
so no page ends up half old and half new. Paired differences use cragraph_lab.paired (the same bootstrap as the
QA suite), per-question scores cragraph.evaluation.qa_metrics.score_record (the same scoring as `eval qa`).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cragraph.evaluation.metrics import percentile
from cragraph.evaluation.qa_metrics import score_record
from cragraph_lab.paired import paired_difference

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/*.md")
WIDTH = 116  # the pages' prose width
MARKER = re.compile(r"<!-- table:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /table:(?P=name) -->", re.DOTALL)

OURS = "crag-multihop"
BASELINE = "plain"
PEER_MODES = (OURS, BASELINE, "langchain-ensemble", "rank-bm25")
PEER_LABELS = {"langchain-ensemble": "LangChain EnsembleRetriever"}
PEER_SETS = (("hotpotqa_migres200", "hotpotqa_migres200 (development set)"), ("xquad_heldout__en", "XQuAD en held-out"))
EM_SETS = (("hotpotqa_migres200", "hotpotqa_migres200 (development set)"), ("xquad_heldout__en", "XQuAD en held-out"),
           ("xquad_heldout__ru", "XQuAD ru held-out"), ("xquad_heldout__zh", "XQuAD zh held-out"),
           ("nq_open_oracle_litm", "NQ (first 200)"))
# The development set's half-unanswerable run is the peers run's crag-multihop rows (same seed, same questions).
TRUTH_SETS = (("peers/hotpotqa_migres200", "hotpotqa_migres200 (development set)"),
              ("truth/hipporag_legacy_train100__hotpotqa", "hipporag_legacy_train100 hotpotqa (training split)"),
              ("truth/hipporag_legacy_train100__musique", "hipporag_legacy_train100 musique (training split)"))
CORPORA = (("userlike", "test corpus (tests/data/userlike)"),
           ("userlike_train2", "data/userlike_train2 (the decision trains on it)"))
TYPES = (("bridge", "bridge"), ("comparison", "comparison"), ("yesno", "yes / no"), ("unanswerable", "unanswerable"),
         ("single", "single-hop"))
RETRIEVAL_SETS = (("hotpotqa_migres200", "hotpotqa_migres200 (dev)"), ("xquad_en", "XQuAD en (first 200)"),
                  ("xquad_ru", "XQuAD ru (first 200)"), ("xquad_zh", "XQuAD zh (first 200)"))
HOPS_SETS = (("hops-hotpotqa_migres200", "hotpotqa_migres200 (dev)"),
             ("hops-musique", "hipporag_legacy_train100 musique (training split)"))
FUZZ_ROWS = (("ci", "fuzz, fixed seed (in `make test`)", "fuzz-ci"), ("long", "fuzz, long, random seeds (`make fuzz`)",
                                                                        "fuzz-long"))


# ------------------------------------------------------------------------------------------------ the run


@dataclass
class Measurement:
    """What measure.sh recorded about its run: where, at which commit, when, and each command with its time."""

    out: Path
    commit: str
    date: str
    dirty: list[str]
    machine: dict[str, str]
    commands: dict[str, str] = field(default_factory=dict)
    times: dict[str, tuple[int, int]] = field(default_factory=dict)
    wall_s: int | None = None

    @classmethod
    def read(cls, out: Path) -> Measurement:
        def text(name: str, default: str = "") -> str:
            path = out / name
            return path.read_text(encoding="utf-8").strip() if path.exists() else default

        if not (out / "commit").exists():
            raise FileNotFoundError(f"{out}/commit is missing: is {out} an OUTDIR of cragraph_lab/measure.sh?")
        run = cls(out=out, commit=text("commit"), date=text("date", "undated"),
                  dirty=[line for line in text("dirty").splitlines() if line.strip()],
                  machine=dict(line.split("\t", 1) for line in text("machine").splitlines() if "\t" in line))
        given = text("outdir", str(out))
        python = text("python", "python")
        for line in text("commands.tsv").splitlines():  # the last line of a name wins (a resumed run)
            name, command = line.split("\t", 1)
            run.commands[name] = shown(command, given, python)
        for line in text("times.tsv").splitlines():
            name, seconds, status = line.split("\t")
            run.times[name] = (int(seconds), int(status))
        wall = text("wall_s")
        run.wall_s = int(wall) if wall else None
        return run

    def stamp(self, names: Sequence[str], extra: str = "", commands: bool = True, alone: bool = False,
              failures_are_results: bool = False) -> str:
        """The line above a table: commit, date, machine, and (unless the table shows them) its commands. A failed
        command stops the rendering, except where its failure is what the table reports (a fuzz run's crash)."""
        failed = [name for name in names if self.times.get(name, (0, 0))[1] != 0]
        if failed and not failures_are_results:
            raise RuntimeError(f"these commands failed, see {self.out}/logs/: {', '.join(failed)}")
        missing = [name for name in names if name not in self.commands]
        if missing:
            raise KeyError(f"{self.out}/commands.tsv does not name {', '.join(missing)}")
        commit = f"`{self.commit}`"
        if self.dirty:
            commit += f" with uncommitted changes to {len(self.dirty)} tracked files"
        cpus, cpu = self.machine.get("cpus", "?"), self.machine.get("cpu", "unknown CPU")
        return (f"Measured at commit {commit} on {self.date} by `bash cragraph_lab/measure.sh OUTDIR` ({cpus} cores, "
                f"{cpu}; OMP_NUM_THREADS=1, {'this command alone' if alone else 'two commands at a time'}){extra}."
                + (f" {commands_line([self.commands[name] for name in names])}" if commands else ""))


def shown(command: str, outdir: str, python: str) -> str:
    """A recorded command as a reader would type it: `python`, OUTDIR and ~ instead of this machine's paths."""
    words = []
    for word in command.split(" "):
        if word == python or word.rsplit("/", 1)[-1].startswith("python"):
            word = "python"
        words.append(word.replace(outdir.rstrip("/"), "OUTDIR").replace(str(Path.home()), "~"))
    return " ".join(words)


def commands_line(commands: Sequence[str]) -> str:
    """The commands, those that differ in one word only (the data set) written once with DIR and its values."""
    groups: list[tuple[list[list[str]], int | None]] = []  # commands of one shape, the position where they differ
    for words in (shlex.split(c) for c in dict.fromkeys(commands)):
        for index, (members, position) in enumerate(groups):
            first = members[0]
            differing = [i for i in range(len(first)) if len(first) == len(words) and first[i] != words[i]]
            if len(first) == len(words) and len(differing) == 1 and position in (None, differing[0]):
                members.append(words)
                groups[index] = (members, differing[0])
                break
        else:
            groups.append(([words], None))
    parts = []
    for members, position in groups:
        if position is None:
            parts.append(f"`{shlex.join(members[0])}`")
        else:
            template = shlex.join(members[0][:position] + ["DIR"] + members[0][position + 1:])
            parts.append(f"`{template}` (DIR: " + ", ".join(f"`{words[position]}`" for words in members) + ")")
    return ("Command: " if len(parts) == 1 else "Commands: ") + "; ".join(parts) + "."


# ------------------------------------------------------------------------------------------------ reading runs


def qa_records(run_dir: Path, mode: str = OURS) -> dict[str, dict[str, Any]]:
    """One mode's records of an `eval qa` run (or `eval folder` run) by question id; a resumed id's last wins."""
    path = run_dir / "results.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing")
    records: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if record.get("mode", mode) == mode:
                records[record["id"]] = record
    if not records:
        raise ValueError(f"{path} holds no {mode} records")
    return records


def metric(records: Iterable[dict[str, Any]], name: str) -> list[float]:
    """Per-question scores, in the records' order: `eval qa`'s metrics, or right / Truth of an `eval folder` run."""
    values = []
    for record in records:
        if "outcome" in record:  # eval folder: right / wrong / abstained, Truth counted the same way
            outcome = record["outcome"]
            values.append(float(outcome == "right") if name == "right" else
                          {"right": 1.0, "wrong": -1.0}.get(outcome, 0.0))
        else:
            values.append(float(score_record(record)[name] or 0.0))
    return values


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def milliseconds(records: Iterable[dict[str, Any]], share: float) -> float | None:
    """A percentile of the time per question the run itself measured (total_ms, or ms for `eval folder`)."""
    times = [r.get("total_ms", r.get("ms")) for r in records]
    kept = [float(t) for t in times if t is not None]
    return percentile(kept, share) if kept else None


def retrieval_report(path: Path) -> dict[str, dict[str, float]]:
    """{mode: metrics} of an `eval retrieval --out` report."""
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing")
    report = json.loads(path.read_text(encoding="utf-8"))
    return {mode: result["metrics"] for mode, result in report["modes"].items()}


def read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing")
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


# ------------------------------------------------------------------------------------------------ formatting


def f3(value: float) -> str:
    """.265, -.005: the docs' style for a share or a mean score."""
    text = f"{value:.3f}"
    return text.replace("0.", ".", 1) if abs(value) < 1 else text


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def difference(ours: Sequence[float], theirs: Sequence[float]) -> str:
    """mean(ours - theirs) [95% paired bootstrap interval]."""
    d = paired_difference(ours, theirs)
    return f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)])


def block(stamp: str, body: str, note: str = "") -> str:
    """Stamp and note wrapped as the pages' prose is (a code span may wrap: Markdown reads the break as a space)."""
    def wrapped(text: str) -> str:
        return "\n".join(textwrap.wrap(text, WIDTH, break_long_words=False, break_on_hyphens=False))

    return f"{wrapped(stamp)}\n\n{body}\n" + (f"\n{wrapped(note)}\n" if note else "")


# ------------------------------------------------------------------------------------------------ the tables


def unanswerable(record: dict[str, Any]) -> bool:
    """Asked of an index without its gold (`eval qa`), or with no gold answer (`eval folder`, older runs too)."""
    if "unanswerable" in record:
        return bool(record["unanswerable"])
    return "outcome" in record and not record.get("answers")


def shared_ids(ours: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]], where: str) -> list[str]:
    """The questions both runs answered; refused when one question was answerable in one run and not the other."""
    shared = [key for key in ours if key in theirs]
    if not shared:
        raise ValueError(f"{where}: no question in common")
    flipped = [key for key in shared if unanswerable(ours[key]) != unanswerable(theirs[key])]
    if flipped:
        raise ValueError(f"{where}: {len(flipped)} questions answerable in one run and not in the other")
    return shared


def peers(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """README: the peers, half unanswerable, with crag-multihop - plain paired."""
    header = ["set", "metric", *(PEER_LABELS.get(m, m) for m in PEER_MODES), f"{OURS} - {BASELINE} [95%]"]
    rows = []
    for folder, label in PEER_SETS:
        by_mode = {mode: qa_records(run.out / "peers" / folder, mode) for mode in PEER_MODES}
        ids = shared_ids(by_mode[OURS], by_mode[BASELINE], f"peers/{folder}")
        for name, first in (("Truth", label), ("EM", "")):
            values = {m: metric((by_mode[m][i] for i in ids), name) for m in PEER_MODES}
            rows.append([first, name, *(f3(mean(values[m])) for m in PEER_MODES),
                         difference(values[OURS], values[BASELINE])])
        shares = {m: [f3(mean(metric((by_mode[m][i] for i in ids), name))) for name in ("Halluc", "Abstain")]
                  for m in PEER_MODES}
        rows.append(["", "Halluc / Abstain", *(" / ".join(shares[m]) for m in PEER_MODES), ""])
    return block(run.stamp(["peers-hotpotqa", "peers-xquad-en"]), table(header, rows))


def peers_full(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: every peers row, with the answerable and unanswerable halves and the time per question."""
    header = ["set", "mode", "questions", "Truth", "EM", "Halluc", "Abstain", "Truth answerable / unanswerable",
              "p50 ms"]
    rows = []
    for folder, label in PEER_SETS:
        for index, mode in enumerate(PEER_MODES):
            records = list(qa_records(run.out / "peers" / folder, mode).values())
            halves = [[r for r in records if unanswerable(r) == flag] for flag in (False, True)]
            rows.append([label if index == 0 else "", mode, str(len(records)), f3(mean(metric(records, "Truth"))),
                         f3(mean(metric(records, "EM"))), f3(mean(metric(records, "Halluc"))),
                         f3(mean(metric(records, "Abstain"))),
                         " / ".join(f3(mean(metric(half, "Truth"))) for half in halves),
                         ms(milliseconds(records, 50))])
    return block(run.stamp(["peers-hotpotqa", "peers-xquad-en"]), table(header, rows))


def em(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: crag-multihop on every answerable set, with the time per question its run measured."""
    header = ["set", "questions", "EM", "F1", "Contains", "Truth", "Halluc", "Abstain", "p50 / p95 ms"]
    rows = []
    for folder, label in EM_SETS:
        records = list(qa_records(run.out / "em" / folder).values())
        rows.append([label, str(len(records)),
                     *(f3(mean(metric(records, name))) for name in ("EM", "F1", "Contains", "Truth", "Halluc",
                                                                    "Abstain")),
                     f"{ms(milliseconds(records, 50))} / {ms(milliseconds(records, 95))}"])
    names = ["em-hotpotqa", "em-xquad-en", "em-xquad-ru", "em-xquad-zh", "em-nq"]
    return block(run.stamp(names), table(header, rows))


def truth(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: crag-multihop with half of each set's questions asked of an index without their gold."""
    header = ["set", "questions", "Truth", "Truth answerable / unanswerable", "EM", "Halluc", "Abstain", "p50 ms"]
    rows = []
    for folder, label in TRUTH_SETS:
        records = list(qa_records(run.out / folder).values())
        halves = [[r for r in records if unanswerable(r) == flag] for flag in (False, True)]
        rows.append([label, str(len(records)), f3(mean(metric(records, "Truth"))),
                     " / ".join(f3(mean(metric(half, "Truth"))) for half in halves),
                     *(f3(mean(metric(records, name))) for name in ("EM", "Halluc", "Abstain")),
                     ms(milliseconds(records, 50))])
    names = ["peers-hotpotqa", "truth-train-hotpotqa", "truth-train-musique"]
    return block(run.stamp(names, extra="; the first row is the peers run's crag-multihop"), table(header, rows))


def corpus(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: the user-style corpora, right / wrong / abstained per question type."""
    runs = {name: list(qa_records(run.out / "corpus" / name).values()) for name, _ in CORPORA}
    header = ["type", *(label + ": right / wrong / abstained" for _, label in CORPORA)]
    rows = []
    for kind, label in TYPES:
        cells = []
        for name, _ in CORPORA:
            members = [r for r in runs[name] if r.get("type") == kind]
            counts = [sum(r["outcome"] == o for r in members) for o in ("right", "wrong", "abstained")]
            cells.append(" / ".join(map(str, counts)) + f" of {len(members)}" if members else "-")
        rows.append([label, *cells])
    rows.append(["Truth (all questions)", *(f3(mean(metric(runs[name], "Truth"))) for name, _ in CORPORA)])
    rows.append(["median ms per question", *(ms(milliseconds(runs[name], 50)) for name, _ in CORPORA)])
    return block(run.stamp(["corpus-test", "corpus-train2"]), table(header, rows))


def retrieval(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: recall per mode and set (hybrid is the default, dynamic fusion)."""
    header = ["set", "mode", "R@1", "R@2", "R@5", "R@10", "AllGold@5", "MRR", "p50 ms"]
    rows = []
    for name, label in RETRIEVAL_SETS:
        for index, (mode, m) in enumerate(retrieval_report(run.out / "retrieval" / f"{name}.json").items()):
            rows.append([label if index == 0 else "", mode,
                         *(f3(m[k]) for k in ("R@1", "R@2", "R@5", "R@10", "AllGold@5", "MRR")), f"{m['p50_ms']:.1f}"])
    names = ["retrieval-hotpotqa", "retrieval-xquad-en", "retrieval-xquad-ru", "retrieval-xquad-zh"]
    return block(run.stamp(names), table(header, rows))


def hops(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: retrieval for multi-hop questions: hybrid, the planned path, the graph walk, the router."""
    header = ["set", "mode", "R@5", "AllGold@5", "MRR", "p50 ms"]
    rows = []
    for name, label in HOPS_SETS:
        for index, (mode, m) in enumerate(retrieval_report(run.out / "retrieval" / f"{name}.json").items()):
            rows.append([label if index == 0 else "", mode, f3(m["R@5"]), f3(m["AllGold@5"]), f3(m["MRR"]),
                         f"{m['p50_ms']:.1f}"])
    return block(run.stamp(["hops-hotpotqa", "hops-musique"]), table(header, rows))


def embed_speed(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: index throughput per embedding backend, side by side in one process."""
    report = read_json(run.out / "embed-speed.json")
    header = ["backend", "chunks/s", f"vs {report['reference']}", f"cosine to {report['reference']} (min / mean)"]
    rows = [[backend, f"{row['chunks_per_s']:.1f}", f"{row['ratio']:.2f}x",
             f"{row['cosine_min']:.5f} / {row['cosine_mean']:.5f}"] for backend, row in report["backends"].items()]
    note = (f"{report['chunks']} passages, batch {report['batch_size']}, median of {report['repeats']} repeats in "
            f"which the backends take turns; the ratio is the median of the per-repeat ratios.")
    return block(run.stamp(["embed-speed"], alone=True), table(header, rows), note)


def reliability(run: Measurement, _old: Path, _old_corpus: Path, kept: Sequence[str] = ()) -> str:
    """README: the fuzz rows of the reliability table (its other rows, which hold no measurement, are kept)."""
    stamp = run.stamp([name for _, _, name in FUZZ_ROWS], extra="; the fuzz rows", commands=False,
                      failures_are_results=True)
    rows = []
    for profile, label, name in FUZZ_ROWS:
        report = read_json(run.out / "fuzz" / f"{profile}.json")
        targets = report["targets"]

        def cases(*targeted: str, of: dict[str, Any] = targets) -> str:
            return f"{sum(of.get(target, {}).get('cases', 0) for target in targeted):,}"

        documents = sum(counts.get("documents", 0) for counts in targets.values())
        result = (f"{report['cases']:,} cases, {len(report['crashing_targets'])} crashing targets, "
                  f"{report['documents_lost']} of {documents:,} documents lost; graph inputs {cases('graph inputs')}, "
                  f"contexts {cases('contexts')}, mixed-type filters {cases('mixed-type filters', 'graph filters')}; "
                  f"{run.times[name][0]} s")
        rows.append([label, result, f"`{run.commands[name]}`"])
    return block(stamp, "\n".join([table(["check", "result", "command"], rows), *kept]))


def times(run: Measurement, _old: Path, _old_corpus: Path) -> str:
    """benchmarks.md: how long each command of the run took (two at a time), so a rerun can be planned."""
    rows = [[f"`{name}`", f"{seconds:,}", str(status)] for name, (seconds, status) in run.times.items()]
    if run.wall_s is not None:
        rows.append(["the whole script", f"{run.wall_s:,}", ""])
    stamp = (f"Measured at commit `{run.commit}` on {run.date} (the commands: OUTDIR/commands.tsv, their logs: "
             f"OUTDIR/logs/).")
    return block(stamp, table(["command", "seconds", "exit status"], rows))


def versus_old(run: Measurement, old: Path, old_corpus: Path) -> str:
    """answering.md: this commit's crag-multihop against the kept old runs, paired by question id."""
    sets = [(run.out / "corpus" / "userlike", old_corpus, "test corpus (tests/data/userlike; not held out)", "right")]
    sets += [(run.out / "em" / folder, old / "em" / folder, label, "EM") for folder, label in EM_SETS[:1]]
    sets += [(run.out / folder, old / "truth" / folder.split("/", 1)[1], label + ", half unanswerable", "EM")
             for folder, label in TRUTH_SETS]
    sets += [(run.out / "em" / folder, old / "em" / folder, label, "EM") for folder, label in EM_SETS[1:]]
    rows = []
    for new_dir, old_dir, label, first in sets:
        ours, theirs = qa_records(new_dir), qa_records(old_dir)
        ids = shared_ids(ours, theirs, str(new_dir))
        for name in (first, "Truth"):
            a, b = metric((ours[i] for i in ids), name), metric((theirs[i] for i in ids), name)
            rows.append([label if name == first else "", str(len(ids)) if name == first else "", name,
                         f3(mean(b)), f3(mean(a)), difference(a, b)])
    names = ["corpus-test", "em-hotpotqa", "peers-hotpotqa", "truth-train-hotpotqa", "truth-train-musique",
             "em-xquad-en", "em-xquad-ru", "em-xquad-zh", "em-nq"]
    stamp = run.stamp(names, extra=f"; old: the runs in `{old}` and `{old_corpus}`")
    return block(stamp, table(["set", "questions", "metric", "old", "new", "new - old [95%]"], rows))


Renderer = Callable[[Measurement, Path, Path], str]
TABLES: dict[str, Renderer] = {
    "peers": peers, "peers-full": peers_full, "em": em, "truth": truth, "corpus": corpus, "retrieval": retrieval,
    "hops": hops, "embed-speed": embed_speed, "reliability": reliability, "times": times, "versus-old": versus_old,
}


# ------------------------------------------------------------------------------------------------ the pages


def pages(root: Path = ROOT) -> list[Path]:
    found: list[Path] = []
    for pattern in PAGES:
        found += sorted(root.glob(pattern))
    return found


def kept_rows(body: str) -> list[str]:
    """The reliability table's hand-written rows: every row of the old block but its header and the fuzz rows."""
    return [line for line in body.splitlines()
            if line.startswith("| ") and not line.startswith(("| check |", "| fuzz"))]


def render_page(text: str, run: Measurement, old: Path, old_corpus: Path, rendered: dict[str, str]) -> str:
    """The page with every marked table rewritten; `rendered` caches a table used on two pages."""
    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r} (known: {', '.join(TABLES)})")
        if name == "reliability":
            body = reliability(run, old, old_corpus, kept_rows(match.group("body")))
        else:
            body = rendered.setdefault(name, TABLES[name](run, old, old_corpus))
        return f"<!-- table:{name} -->\n{body}<!-- /table:{name} -->"

    return MARKER.sub(replace, text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cragraph_lab.tables", description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path, help="the OUTDIR of `bash cragraph_lab/measure.sh OUTDIR`")
    parser.add_argument("--old", type=Path, default=Path("runs/measure-old"),
                        help="the old side of docs/answering.md's comparison: em/ and truth/ `eval qa` runs "
                             "(default: %(default)s)")
    parser.add_argument("--old-corpus", type=Path, default=Path("runs/userlike-old"),
                        help="the old `eval folder` run of tests/data/userlike (default: %(default)s)")
    parser.add_argument("--print", action="store_true", help="print the rendered pages' tables, write nothing")
    args = parser.parse_args(argv)
    run = Measurement.read(args.outdir)
    rendered: dict[str, str] = {}
    updated = {page: render_page(page.read_text(encoding="utf-8"), run, args.old, args.old_corpus, rendered)
               for page in pages()}  # every table first: a missing run stops before any page is written
    for page, text in updated.items():
        if args.print:
            for match in MARKER.finditer(text):
                print(f"== {page.relative_to(ROOT)}: {match.group('name')}\n{match.group('body')}")
        elif text != page.read_text(encoding="utf-8"):
            page.write_text(text, encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}")
    unused = sorted(set(TABLES) - set(rendered) - {"reliability"})
    if unused:
        print(f"note: no page marks {', '.join(unused)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
