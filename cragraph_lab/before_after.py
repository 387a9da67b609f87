"""`python -m cragraph_lab.before_after BEFORE AFTER`: two measurement folders of the same commands (runs of two
commits), paired question by question: right / wrong / abstained, EM where the run has it, and Truth (right +1,
abstained 0, wrong -1) with its paired bootstrap interval (cragraph_lab.paired). Every results.jsonl under BEFORE
is matched with the one at the same relative path under AFTER, by question id and mode.

A user-style folder's questions are split by type, and by `claims` of its expected.json where it has one (true,
false and absent-entity yes / no claims).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from cragraph.evaluation.qa_metrics import contains_answer, exact_match
from cragraph_lab.paired import paired_difference


def outcome(record: dict[str, Any]) -> str:
    """right / wrong / abstained, as `eval folder` counts them (an `eval qa` record by Contains)."""
    if record.get("outcome"):
        return str(record["outcome"])
    if record.get("abstained"):
        return "abstained"
    golds = record.get("answers") or []
    return "right" if golds and contains_answer(record.get("answer") or "", golds) > 0 else "wrong"


def _records(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return {(str(r.get("mode", "")), str(r["id"])): r for r in rows}


def _claims(results: Path) -> dict[str, str]:
    """A user-style folder's claim kinds by question id (its data folder's expected.json), when it has them."""
    for parent in (Path("data") / results.parent.name, Path("data") / results.parent.name.split("__")[-1]):
        expected = parent / "expected.json"
        if expected.is_file():
            return dict(json.loads(expected.read_text(encoding="utf-8")).get("claims", {}))
    return {}


def compare(before: Path, after: Path) -> str:
    lines = ["| run | mode | group | questions | before r/w/a | after r/w/a | EM before -> after "
             "| Truth before -> after | difference [95%] |", "|---|---|---|---|---|---|---|---|---|"]
    for old in sorted(before.rglob("results.jsonl")):
        new = after / old.relative_to(before)
        if not new.is_file():
            continue
        a, b = _records(old), _records(new)
        claims = _claims(old)
        groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for key in sorted(a.keys() & b.keys()):
            record = a[key]
            groups[(key[0], "all")].append(key)
            kind = claims.get(key[1]) or record.get("type")
            if kind and claims:
                groups[(key[0], str(kind))].append(key)
            if record.get("unanswerable") is not None and not claims:
                groups[(key[0], "unanswerable" if record["unanswerable"] else "answerable")].append(key)
        for (mode, group), keys in sorted(groups.items()):
            counts = []
            for side in (a, b):
                found = [outcome(side[k]) for k in keys]
                counts.append("/".join(str(found.count(o)) for o in ("right", "wrong", "abstained")))
            truth = [[{"right": 1.0, "wrong": -1.0}.get(outcome(side[k]), 0.0) for k in keys] for side in (a, b)]
            em = ""
            if "answers" in a[keys[0]] and "outcome" not in a[keys[0]]:
                per = [[exact_match(side[k].get("answer") or "", side[k]["answers"]) if side[k]["answers"]
                        and not side[k].get("abstained") else 0.0 for k in keys] for side in (a, b)]
                moved = paired_difference(per[1], per[0])
                em = (f"{sum(per[0]) / len(keys):.3f} -> {sum(per[1]) / len(keys):.3f} "
                      f"({moved.mean:+.3f} [{moved.low:+.3f}, {moved.high:+.3f}])")
            diff = paired_difference(truth[1], truth[0])
            lines.append(f"| {old.parent.relative_to(before)} | {mode or '-'} | {group} | {len(keys)} | {counts[0]} | "
                         f"{counts[1]} | {em} | {sum(truth[0]) / len(keys):+.3f} -> {sum(truth[1]) / len(keys):+.3f} | "
                         f"{diff.mean:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}] |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    print(compare(args.before, args.after))


if __name__ == "__main__":
    main()
