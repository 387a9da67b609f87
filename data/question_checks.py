"""What data/check_userlike.py and data/check_longdocs.py check alike in a folder's questions.jsonl, and how both
report. Plain python3, no dependencies; each checker imports it from beside itself."""
import json
import re
import sys

FIELDS = {"id", "question", "answers", "type", "language", "supporting_docs", "hops"}
LANGS = ("en", "ru", "zh")
errors = []


def err(msg):
    errors.append(msg)


def questions(path, types, extra, counts):
    """Each question line that parses, has exactly FIELDS (and the fields `extra` adds for its type), a known type
    and language and a unique <language>-<type>-NN id, counted by (type, language) in `counts`; the other lines
    are reported. Blank lines are skipped."""
    ids = set()
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip()]
    for ln, line in enumerate(lines, 1):
        try:
            q = json.loads(line)
        except ValueError as e:
            err(f"line {ln}: does not parse ({e})")
            continue
        want = FIELDS | set(extra.get(q.get("type"), ()))
        if set(q) != want:
            err(f"line {ln}: fields {sorted(q)} != {sorted(want)}")
            continue
        qid, typ, lang = q["id"], q["type"], q["language"]
        if typ not in types or lang not in LANGS:
            err(f"{qid}: bad type {typ!r} or language {lang!r}")
            continue
        if qid in ids:
            err(f"{qid}: duplicate id")
        ids.add(qid)
        if not re.fullmatch(rf"{lang}-{typ}-\d\d", qid):
            err(f"{qid}: id does not follow <language>-<type>-NN")
        counts[(typ, lang)] += 1
        yield q


def finish():
    """Print every problem and exit 1, or print OK."""
    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors:
            print("  -", e)
        sys.exit(1)
    print("OK")
