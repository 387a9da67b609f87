#!/usr/bin/env python3
"""Checks a folder of long-document questions (corpus/ + questions.jsonl), e.g. data/longdocs_train1.
Plain python3, no dependencies.

Run: python3 data/check_longdocs.py FOLDER
Prints a summary and exits 1 on any problem.

Checks: corpus has one en, one ru and one zh document of the expected length; every question line parses and
has exactly the expected fields; ids are unique and follow <language>-<type>-NN; counts per type and language;
supporting_docs exist and are in the question's language; every answer / list item surface form occurs in a
supporting document (case-insensitive); list answers are the first form of each item; multihop questions have
two hop sub-questions and all other types hops == []; unanswerable questions have answers == [].
"""
import os
import re
import sys
from collections import Counter

from question_checks import LANGS, err, finish, questions

HERE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else sys.exit("usage: check_longdocs.py FOLDER")
CORPUS = os.path.join(HERE, "corpus")
QUESTIONS = os.path.join(HERE, "questions.jsonl")

TYPES = ("simple", "relation", "multihop", "list", "temporal", "unanswerable")
PER_LANG = {"simple": 2, "relation": 2, "multihop": 2, "list": 3, "temporal": 2, "unanswerable": 1}
# document length: words for en/ru, CJK characters for zh
LENGTH = {"en": (2500, 4000), "ru": (2500, 4000), "zh": (3000, 5000)}

CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"\w+(?:[-'’]\w+)*")


def norm(text):
    return re.sub(r"\s+", " ", text).casefold()


def language_of(text):
    if len(CJK.findall(text)) > 200:
        return "zh"
    if len(re.findall(r"[а-яё]", text, re.I)) > 200:
        return "ru"
    return "en"


def length_of(text, lang):
    return len(CJK.findall(text)) if lang == "zh" else len(WORD.findall(text))


# ---- corpus
docs, doc_lang, lengths = {}, {}, {}
for name in sorted(os.listdir(CORPUS)):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as handle:
        raw = handle.read()
    if not name.endswith((".md", ".txt")):
        err(f"{name}: unexpected extension")
    if name.endswith(".md") and not raw.startswith("# "):
        err(f"{name}: .md document does not begin with '# Title'")
    lang = language_of(raw)
    docs[name], doc_lang[name] = norm(raw), lang
    lengths[name] = n = length_of(raw, lang)
    lo, hi = LENGTH[lang]
    if not lo <= n <= hi:
        err(f"{name}: length {n} ({'CJK characters' if lang == 'zh' else 'words'}), want {lo}-{hi}")
lang_counts = Counter(doc_lang.values())
for lang in LANGS:
    if lang_counts[lang] != 1:
        err(f"corpus: {lang_counts[lang]} {lang} documents, want 1")


def check_forms(qid, forms, sd, what):
    for f in forms:
        if not isinstance(f, str) or not f.strip():
            err(f"{qid}: empty or non-string {what}")
        elif not any(norm(f) in docs[d] for d in sd):
            err(f"{qid}: {what} {f!r} not found in {sd}")


# ---- questions
counts = Counter()
for q in questions(QUESTIONS, TYPES, {"list": ("items",)}, counts):
    qid, typ, lang, ans, sd, hops = q["id"], q["type"], q["language"], q["answers"], q["supporting_docs"], q["hops"]
    if not isinstance(q["question"], str) or not q["question"].strip():
        err(f"{qid}: empty question")
    if not isinstance(sd, list) or not sd:
        err(f"{qid}: supporting_docs must be a non-empty list")
        continue
    missing = [d for d in sd if d not in docs]
    if missing:
        err(f"{qid}: supporting docs missing: {missing}")
        continue
    for d in sd:
        if doc_lang[d] != lang:
            err(f"{qid}: supporting doc {d} is {doc_lang[d]}, question is {lang}")
    if not isinstance(ans, list):
        err(f"{qid}: answers must be a list")
        continue
    if typ == "multihop":
        if not (isinstance(hops, list) and len(hops) == 2 and all(isinstance(h, str) and h.strip() for h in hops)):
            err(f"{qid}: multihop needs two hop sub-questions")
    elif hops != []:
        err(f"{qid}: hops must be [] for {typ}")
    if typ == "unanswerable":
        if ans:
            err(f"{qid}: unanswerable with answers")
        continue
    if not ans:
        err(f"{qid}: no answers")
        continue
    if typ == "list":
        items = q["items"]
        if not (isinstance(items, list) and len(items) >= 2 and all(isinstance(i, list) and i for i in items)):
            err(f"{qid}: items must be a list of >= 2 non-empty lists of surface forms")
            continue
        if ans != [i[0] for i in items]:
            err(f"{qid}: answers must be the first form of each item")
        for item in items:
            check_forms(qid, item, sd, "item form")
    else:
        check_forms(qid, ans, sd, "answer")

# ---- counts
for typ in TYPES:
    for lang in LANGS:
        if counts[(typ, lang)] != PER_LANG[typ]:
            err(f"count {typ}/{lang}: {counts[(typ, lang)]}, want {PER_LANG[typ]}")

print("documents:", {name: f"{doc_lang[name]}, {lengths[name]} {'CJK chars' if doc_lang[name] == 'zh' else 'words'}"
                     for name in docs})
for typ in TYPES:
    print(f"{typ:13s}", {lang: counts[(typ, lang)] for lang in LANGS})
print("total questions:", sum(counts.values()))
finish()
