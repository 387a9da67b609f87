#!/usr/bin/env python3
"""Checks a folder of user-style training pages (corpus/ + questions.jsonl) against its expected.json (question
counts by type and language, documents by language, entities that must stay absent). Plain python3, no
dependencies.

Run: python3 data/check_userlike.py data/userlike_train2   -> prints a summary, exits 1 on any problem.
"""
import html
import json
import os
import re
import sys
from collections import Counter

from question_checks import LANGS, err, finish, questions

HERE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else sys.exit("usage: check_userlike.py FOLDER")
CORPUS = os.path.join(HERE, "corpus")
QUESTIONS = os.path.join(HERE, "questions.jsonl")

TYPES = ("bridge", "single", "comparison", "yesno", "unanswerable")
with open(os.path.join(HERE, "expected.json"), encoding="utf-8") as spec:
    SPEC = json.load(spec)
EXPECTED = SPEC["questions"]
EXPECTED_DOCS = SPEC["documents"]
YESNO = {"en": ("yes", "no"), "ru": ("да", "нет"), "zh": ("是", "否")}
# Entities the 'not in the corpus at all' unanswerable questions ask about: they must stay absent.
ABSENT = SPEC["absent"]

CJK = re.compile(r"[\u4e00-\u9fff]")


def plain_text(name, raw):
    if name.endswith(".html"):
        raw = re.sub(r"<[^>]+>", " ", raw)
        raw = html.unescape(raw)
    return raw


def title_of(name, raw):
    if name.endswith(".html"):
        m = re.search(r"<title>(.*?)</title>", raw, re.S)
        return html.unescape(m.group(1)).strip() if m else ""
    first = raw.strip().splitlines()[0] if raw.strip() else ""
    return first.lstrip("#").strip()


def word_count(text):
    cjk = len(CJK.findall(text))
    rest = CJK.sub(" ", text)
    rest = re.sub(r"[#|*\-–—:：,，.。;；()（）\[\]]+", " ", rest)
    return cjk / 2 + len(rest.split())


def language_of(text):
    if CJK.search(text):
        return "zh"
    if re.search(r"[а-яё]", text, re.I):
        return "ru"
    return "en"


# ---- corpus
docs, titles, doc_lang = {}, {}, {}
for name in sorted(os.listdir(CORPUS)):
    path = os.path.join(CORPUS, name)
    with open(path, encoding="utf-8") as handle:
        raw = handle.read()
    if not raw.strip():
        err(f"{name}: empty file")
        continue
    ext = name.rsplit(".", 1)[-1]
    if ext not in ("md", "txt", "html"):
        err(f"{name}: unexpected extension")
    if ext == "md" and not raw.startswith("# "):
        err(f"{name}: .md page does not begin with '# Title'")
    if ext == "html" and not re.match(r"<html><head><title>.+?</title></head><body>", raw):
        err(f"{name}: html page does not start with <html><head><title>")
    text = plain_text(name, raw)
    docs[name] = text
    titles[name] = title_of(name, raw)
    doc_lang[name] = language_of(text)
    wc = word_count(text)
    if not 80 <= wc <= 350:
        err(f"{name}: {wc:.0f} words (want 80-350)")

lang_counts = Counter(doc_lang.values())
for lang, n in EXPECTED_DOCS.items():
    if lang_counts[lang] != n:
        err(f"corpus: {lang_counts[lang]} {lang} documents, want {n}")
ext_counts = Counter(n.rsplit(".", 1)[-1] for n in docs)

for s in ABSENT:
    for name, text in docs.items():
        if s.lower() in text.lower():
            err(f"absent entity {s!r} occurs in {name}")


def occurs(ans, text, lang):
    return ans.lower() in text.lower() if lang == "en" else ans in text


def names(entity, text, lang):
    """Whether text names entity; Russian names are matched by stems (case forms: Самарин / Самариным)."""
    if lang != "ru":
        return occurs(entity, text, lang)
    stems = [w[:-2] for w in entity.split() if len(w) > 4] or [entity]
    return all(s in text for s in stems)


# ---- questions
counts = Counter()
for q in questions(QUESTIONS, TYPES, {"bridge": ("bridge",)}, counts):
    qid, typ, lang, ans, sd = q["id"], q["type"], q["language"], q["answers"], q["supporting_docs"]
    if not isinstance(ans, list) or not all(isinstance(a, str) and a for a in ans):
        err(f"{qid}: answers must be a list of non-empty strings")
        continue
    if not q["question"].strip():
        err(f"{qid}: empty question")
    if not sd and typ != "unanswerable":  # unanswerable questions here have supporting_docs: []
        err(f"{qid}: no supporting_docs")
    missing = [d for d in sd if d not in docs]
    if missing:
        err(f"{qid}: supporting docs missing: {missing}")
        continue
    for d in sd:
        if doc_lang[d] != lang:
            err(f"{qid}: supporting doc {d} is in another language")
    if typ == "unanswerable":
        if ans:
            err(f"{qid}: unanswerable with answers")
        if q["hops"]:
            err(f"{qid}: hops must be []")
        continue
    if not ans:
        err(f"{qid}: no answers")
        continue
    if typ == "yesno":
        if len(ans) != 1 or ans[0] not in YESNO[lang]:
            err(f"{qid}: yes/no answer must be one of {YESNO[lang]}")
        counts[("yesno-" + ans[0], lang)] += 1
        continue
    for a in ans:
        if not any(occurs(a, docs[d], lang) for d in sd):
            err(f"{qid}: answer {a!r} not found in {sd}")
    if typ == "comparison" and not any(occurs(a, q["question"], lang) or a[:-1] in q["question"] for a in ans):
        err(f"{qid}: comparison answer is not one of the two names in the question")
    if typ == "bridge":
        hops, bridge = q["hops"], q["bridge"]
        if len(sd) < 2:
            err(f"{qid}: bridge needs two supporting docs")
            continue
        if not (isinstance(hops, list) and len(hops) == 2 and all(isinstance(h, str) and h for h in hops)):
            err(f"{qid}: bridge needs two hop questions")
            continue
        for a in ans:
            if occurs(a, docs[sd[0]], lang):
                err(f"{qid}: answer {a!r} occurs in the bridge source page {sd[0]}")
        if not bridge or not names(bridge, docs[sd[0]], lang):
            err(f"{qid}: bridge {bridge!r} not named on the first page {sd[0]}")
        if bridge not in titles[sd[1]]:
            err(f"{qid}: bridge {bridge!r} is not the title of {sd[1]} ({titles[sd[1]]!r})")
        if not names(bridge, hops[1], lang):
            err(f"{qid}: second hop does not name the bridge entity {bridge!r}")
        if names(bridge, q["question"], lang):
            err(f"{qid}: the question names the bridge entity")
    elif q["hops"]:
        err(f"{qid}: hops must be [] for {typ}")

for typ, per in EXPECTED.items():
    for lang, n in per.items():
        if counts[(typ, lang)] != n:
            err(f"count {typ}/{lang}: {counts[(typ, lang)]}, want {n}")

print("documents:", dict(lang_counts), "formats:", dict(ext_counts))
for typ in TYPES:
    print(f"{typ:13s}", {lang: counts[(typ, lang)] for lang in LANGS})
print("yes/no split:", {lang: (counts[("yesno-" + YESNO[lang][0], lang)], counts[("yesno-" + YESNO[lang][1], lang)])
                        for lang in LANGS})
print("total questions:", sum(counts[(t, lang)] for t in TYPES for lang in LANGS))
finish()
