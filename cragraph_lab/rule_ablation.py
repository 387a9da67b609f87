"""`python -m cragraph_lab.rule_ablation --out DIR SET...`: each answer-side rule switched off, one at a time.

Why: a rule earns its place only if switching it off loses answers on questions nobody read while writing it.
A rule that gives nothing on a question (returns its "off" value) cannot change that question's answer, so the
run is cheap: every question is answered once at the defaults while each rule records where it fired, then, rule by
rule, only the questions it fired on are answered again with the rule off. The other questions keep their answers
by construction, and the paired difference is taken over the whole set.

A SET is a user-style folder (corpus/ + questions.jsonl, as `cragraph eval folder` reads) or a benchmark folder
(corpus.jsonl + questions.jsonl, as shared/data holds). Rules are switched off by replacing the function wherever the
product imported it (lab only: the product has no switch for them).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from cragraph_lab.paired import paired_difference


def _none(*_: Any, **__: Any) -> None:
    return None


def _false(*_: Any, **__: Any) -> bool:
    return False


def _empty(*_: Any, **__: Any) -> list[Any]:
    return []


def _second(*args: Any, **__: Any) -> Any:
    return args[1]


@dataclass(frozen=True)
class Rule:
    """A rule module's entry point and the value it gives when it has nothing to say."""

    name: str
    target: str  # "module:function"
    off: Callable[..., Any]
    means: str


RULES = (
    Rule("options_by_values", "rag.answering.rules.compare:compare_options", _none,
         '"A or B?" decided by each option\'s year or quantity'),
    Rule("joined_claims", "rag.answering.rules.coordinated:coordinated", _none,
         '"Were A and B both ...?" read as one claim per subject'),
    Rule("compared_claim", "rag.answering.rules.compared_claims:compared_claim", _none,
         '"Is A longer than B?" by the values of the two pages'),
    Rule("both_of_a_kind", "rag.answering.rules.forms:_both_of_a_kind", _none,
         '"Are A and B both X?" by X\'s words in each page\'s opening'),
    Rule("paired_claim", "rag.answering.rules.compared_claims:paired_claim", _none,
         "a claim pairing two named things, by the page that names both"),
    Rule("hidden_question", "rag.answering.rules.hidden_question:hidden_claim", _none,
         "a single claim read as the question it hides and its value"),
    Rule("claim_reading", "rag.answering.claims:read_claim", _none,
         "a single claim on its subject's page, by the value's pointer share"),
    Rule("span_reranker", "rag.reader.rerank:rerank", _second,
         "the reader's spans re-ranked by answer-type features"),
    Rule("linked_pages", "rag.answering.readings:linked_pages", _empty,
         "pages a sentence of the context links to, read for a bridge"),
    Rule("look_alike", "rag.answering.candidates:about_a_look_alike", _false,
         "a candidate about an entity the question does not name"),
)
FIRED: set[str] = set()


def _original(target: str) -> tuple[Any, str, Callable[..., Any]]:
    module_name, attribute = target.split(":")
    module = importlib.import_module(module_name)
    return module, attribute, getattr(module, attribute)


@contextmanager
def _replaced(function: Callable[..., Any], by: Callable[..., Any]) -> Iterator[None]:
    """`function` replaced by `by` in every loaded module of the product that holds it."""
    holders = [(m, name) for m in list(sys.modules.values())
               if getattr(m, "__name__", "").split(".")[0] in ("cragraph", "rag", "models", "nodes", "graph", "stores")
               for name, value in list(vars(m).items()) if value is function]
    for module, name in holders:
        setattr(module, name, by)
    try:
        yield
    finally:
        for module, name in holders:
            setattr(module, name, function)


def _recording(rule: Rule, function: Callable[..., Any]) -> Callable[..., Any]:
    def recorded(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        off = rule.off(*args, **kwargs)
        if result is not off and result != off:
            FIRED.add(rule.name)
        return result
    return recorded


def _load_set(folder: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The set's documents (a corpus folder or corpus.jsonl) and its questions."""
    source = folder / "corpus" if (folder / "corpus").is_dir() else folder / "corpus.jsonl"
    questions = [json.loads(line) for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    return source, questions


def _score(outcome: str) -> int:
    return {"right": 1, "wrong": -1}.get(outcome, 0)


def ablate(folder: Path, out: Path, rules: Sequence[Rule] = RULES, limit: int | None = None) -> list[dict[str, Any]]:
    """One row per rule: questions it fired on, right / wrong / abstained at the defaults and with it off there."""
    from cragraph.evaluation.folder_qa import outcome
    from graph import graph
    from rag.context import Context
    from stores.bundle import IndexBundle, IndexSettings

    source, questions = _load_set(folder)
    questions = questions[:limit]
    index = out / "index"
    IndexBundle.build(index, [source], IndexSettings(), progress=False)
    context = Context(index=str(index), web_search=False)

    def ask(question: dict[str, Any]) -> str:
        result = graph.invoke({"question": question["question"]}, context=context)
        return outcome(result, question.get("answers") or [])

    ask(questions[0])  # every module the graph imports lazily is loaded before the rules are replaced in it
    originals = {rule.name: _original(rule.target)[2] for rule in rules}
    baseline: dict[str, str] = {}
    fired: dict[str, set[str]] = {rule.name: set() for rule in rules}
    with _all_recorded(rules, originals):
        for question in tqdm(questions, desc=f"{folder.name} defaults"):
            FIRED.clear()
            baseline[question["id"]] = ask(question)
            for name in FIRED:
                fired[name].add(question["id"])
    rows = []
    for rule in rules:
        ablated = dict(baseline)
        with _replaced(originals[rule.name], rule.off):
            for question in tqdm([q for q in questions if q["id"] in fired[rule.name]], desc=f"{rule.name} off"):
                ablated[question["id"]] = ask(question)
        ids = [q["id"] for q in questions]
        difference = paired_difference([_score(baseline[i]) for i in ids], [_score(ablated[i]) for i in ids])
        on = [baseline[i] for i in fired[rule.name]]
        off = [ablated[i] for i in fired[rule.name]]
        rows.append({"set": folder.name, "rule": rule.name, "fired": len(on),
                     "on": [on.count(o) for o in ("right", "wrong", "abstained")],
                     "off": [off.count(o) for o in ("right", "wrong", "abstained")],
                     "truth_difference": [difference.mean, difference.low, difference.high]})
        (out / "rules.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


@contextmanager
def _all_recorded(rules: Sequence[Rule], originals: dict[str, Callable[..., Any]]) -> Iterator[None]:
    with _replaced_all([(originals[r.name], _recording(r, originals[r.name])) for r in rules]):
        yield


@contextmanager
def _replaced_all(pairs: Sequence[tuple[Callable[..., Any], Callable[..., Any]]]) -> Iterator[None]:
    if not pairs:
        yield
        return
    with _replaced(*pairs[0]), _replaced_all(pairs[1:]):
        yield


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    means = {rule.name: rule.means for rule in RULES}
    lines = ["| set | rule | what it does | fired on | on: right / wrong / abstained | off: right / wrong / abstained "
             "| Truth with it on - off [95%] |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        mean, low, high = r["truth_difference"]
        lines.append(f"| {r['set']} | {r['rule']} | {means.get(r['rule'], '')} | {r['fired']} | "
                     f"{' / '.join(map(str, r['on']))} | {' / '.join(map(str, r['off']))} | "
                     f"{mean:+.3f} [{low:+.3f}, {high:+.3f}] |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", type=Path, help="user-style or benchmark folders")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rules", nargs="*", help="rule names (default: all)")
    parser.add_argument("--limit", type=int, help="the first N questions of each set")
    args = parser.parse_args(argv)
    chosen = [r for r in RULES if not args.rules or r.name in args.rules]
    rows: list[dict[str, Any]] = []
    for folder in args.sets:
        out = args.out / folder.name
        out.mkdir(parents=True, exist_ok=True)
        rows += ablate(folder, out, chosen, args.limit)
    (args.out / "rules.md").write_text(markdown(rows) + "\n", encoding="utf-8")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
