#!/usr/bin/env bash
# Every measured table in README.md and docs/ from one checkout, in one go:
#
#     bash cragraph_lab/measure.sh OUTDIR && python -m cragraph_lab.tables OUTDIR
#
# Why one script: a number in the docs is worth only as much as the commit and the command behind it. This runs
# each command behind each table (cragraph_lab/tables.py renders them) with the checkout's own code
# (`python -m cragraph`, run from the repository root), and records in OUTDIR the commit, the date, the machine,
# each command line, its seconds and its exit status (commands.tsv, times.tsv) and its log (logs/NAME.log).
#
# Two commands run at a time (two lanes), one per core of the 2-core machine the docs describe; every command is
# single-threaded (OMP_NUM_THREADS=1), so the times per question are those of a machine with one other job on it.
# The embedding-speed bench runs alone at the end. An OUTDIR of another commit is refused; rerunning into the same
# OUTDIR resumes (`eval qa` skips the questions it already answered) and runs the other commands again.
#
# Environment: PYTHON (default .venv/bin/python), CRAGRAPH_DATA (default ../shared/data, the shared datasets),
# CRAGRAPH_CACHE_DIR (default ~/.cache/cragraph: XQuAD's held-out half, written by `python -m cragraph_lab bench
# training-data`, and the dataset indexes).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bash cragraph_lab/measure.sh OUTDIR" >&2
    exit 2
fi
if [ ! -f pyproject.toml ] || [ ! -d cragraph_lab ]; then
    echo "error: run from the repository root (the folder holding pyproject.toml and cragraph_lab/)" >&2
    exit 2
fi

OUT=$1
PY=${PYTHON:-.venv/bin/python}
DATA=${CRAGRAPH_DATA:-../shared/data}
CACHE=${CRAGRAPH_CACHE_DIR:-$HOME/.cache/cragraph}
HELDOUT=$CACHE/evaluator-data/xquad_heldout
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

missing=0
for path in "$DATA/hotpotqa_migres200" "$DATA/nq_open_oracle_litm" "$DATA/hipporag_legacy_train100/hotpotqa" \
            "$DATA/hipporag_legacy_train100/musique" "$DATA/xquad_ru_zh_en/en" "$DATA/xquad_ru_zh_en/ru" \
            "$DATA/xquad_ru_zh_en/zh" "$HELDOUT/en" "$HELDOUT/ru" "$HELDOUT/zh" tests/data/userlike data/userlike_train2; do
    if [ ! -e "$path" ]; then
        echo "error: $path is missing" >&2
        missing=1
    fi
done
if [ ! -x "$PY" ]; then
    echo "error: no Python at $PY (make install, or set PYTHON)" >&2
    missing=1
fi
if [ "$missing" -ne 0 ]; then
    echo "(XQuAD's held-out half is written by \`python -m cragraph_lab bench training-data\`)" >&2
    exit 2
fi

commit=$(git rev-parse --short HEAD)
mkdir -p "$OUT/logs"
if [ -f "$OUT/commit" ] && [ "$(cat "$OUT/commit")" != "$commit" ]; then
    echo "error: $OUT holds runs of commit $(cat "$OUT/commit"); this checkout is $commit: use another OUTDIR" >&2
    exit 2
fi
echo "$commit" > "$OUT/commit"
echo "$OUT" > "$OUT/outdir"
echo "$PY" > "$OUT/python"
git status --porcelain --untracked-files=no > "$OUT/dirty"
[ -f "$OUT/date" ] || date -u +%Y-%m-%d > "$OUT/date"
{
    echo "cpus	$(getconf _NPROCESSORS_ONLN)"  # not nproc: it follows OMP_NUM_THREADS
    echo "cpu	$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "python	$("$PY" -c 'import platform; print(platform.python_version())')"
} > "$OUT/machine"
touch "$OUT/times.tsv" "$OUT/commands.tsv"
before=$(wc -l < "$OUT/times.tsv")  # this invocation's statuses are the lines after these

run() {  # NAME COMMAND...: the command with its log; its line, seconds and exit status recorded; never fails
    local name=$1 start=$SECONDS status=0
    shift
    printf '%s\t%s\n' "$name" "$*" >> "$OUT/commands.tsv"
    echo "$(date -u +%H:%M:%S) start $name"
    "$@" > "$OUT/logs/$name.log" 2>&1 || status=$?
    printf '%s\t%s\t%s\n' "$name" $((SECONDS - start)) "$status" >> "$OUT/times.tsv"
    echo "$(date -u +%H:%M:%S) done  $name ($((SECONDS - start)) s, exit $status)"
}

PEERS=(--limit 200 --unanswerable 0.5 --modes plain,crag-multihop,langchain-ensemble,rank-bm25 --no-plots --quiet
       --out "$OUT/peers")
EM=(--limit 200 --modes crag-multihop --no-plots --quiet --out "$OUT/em")
TRUTH=(--limit 100 --unanswerable 0.5 --modes crag-multihop --no-plots --quiet --out "$OUT/truth")
FUSION=(--limit 200 --modes bm25,dense,hybrid-rrf,hybrid-score,hybrid)
HOPS=(--limit 200 --modes hybrid,multihop,graph,router)
mkdir -p "$OUT/retrieval" "$OUT/fuzz"

lane_a() {
    run peers-hotpotqa "$PY" -m cragraph_lab eval qa --dataset "$DATA/hotpotqa_migres200" "${PEERS[@]}"
    run em-hotpotqa "$PY" -m cragraph_lab eval qa --dataset "$DATA/hotpotqa_migres200" "${EM[@]}"
    run truth-train-hotpotqa "$PY" -m cragraph_lab eval qa --dataset "$DATA/hipporag_legacy_train100/hotpotqa" "${TRUTH[@]}"
    run em-nq "$PY" -m cragraph_lab eval qa --dataset "$DATA/nq_open_oracle_litm" "${EM[@]}"
    run retrieval-hotpotqa "$PY" -m cragraph_lab eval retrieval --dataset "$DATA/hotpotqa_migres200" "${FUSION[@]}" \
        --out "$OUT/retrieval/hotpotqa_migres200.json"
    run retrieval-xquad-zh "$PY" -m cragraph_lab eval retrieval --dataset "$DATA/xquad_ru_zh_en/zh" "${FUSION[@]}" \
        --out "$OUT/retrieval/xquad_zh.json"
    run hops-hotpotqa "$PY" -m cragraph_lab eval retrieval --dataset "$DATA/hotpotqa_migres200" "${HOPS[@]}" \
        --out "$OUT/retrieval/hops-hotpotqa_migres200.json"
    run retrieval-xquad-ru "$PY" -m cragraph_lab eval retrieval --dataset "$DATA/xquad_ru_zh_en/ru" "${FUSION[@]}" \
        --out "$OUT/retrieval/xquad_ru.json"
    run hops-musique "$PY" -m cragraph_lab eval retrieval --dataset "$DATA/hipporag_legacy_train100/musique" "${HOPS[@]}" \
        --out "$OUT/retrieval/hops-musique.json"
    run corpus-test "$PY" -m cragraph eval folder tests/data/userlike/corpus tests/data/userlike/questions.jsonl \
        --quiet --out "$OUT/corpus/userlike"
    run fuzz-ci env CRAGRAPH_FUZZ_REPORT="$OUT/fuzz/ci.json" "$PY" -m pytest -q tests/fuzz -p no:cacheprovider
}

lane_b() {
    run peers-xquad-en "$PY" -m cragraph_lab eval qa --dataset "$HELDOUT/en" "${PEERS[@]}"
    run em-xquad-en "$PY" -m cragraph_lab eval qa --dataset "$HELDOUT/en" "${EM[@]}"
    run em-xquad-ru "$PY" -m cragraph_lab eval qa --dataset "$HELDOUT/ru" "${EM[@]}"
    run em-xquad-zh "$PY" -m cragraph_lab eval qa --dataset "$HELDOUT/zh" "${EM[@]}"
    run truth-train-musique "$PY" -m cragraph_lab eval qa --dataset "$DATA/hipporag_legacy_train100/musique" "${TRUTH[@]}"
    run corpus-train2 "$PY" -m cragraph eval folder data/userlike_train2/corpus data/userlike_train2/questions.jsonl \
        --quiet --out "$OUT/corpus/userlike_train2"
    run retrieval-xquad-en "$PY" -m cragraph_lab eval retrieval --dataset "$DATA/xquad_ru_zh_en/en" "${FUSION[@]}" \
        --out "$OUT/retrieval/xquad_en.json"
    run fuzz-long env CRAGRAPH_FUZZ_PROFILE=long CRAGRAPH_FUZZ_REPORT="$OUT/fuzz/long.json" \
        "$PY" -m pytest -q tests/fuzz -p no:cacheprovider
}

echo "measuring commit $commit into $OUT"
lane_a &
a=$!
lane_b &
b=$!
wait "$a"
wait "$b"
# Alone: a throughput bench, with the threads `cragraph index` uses by default here (one per core).
run embed-speed "$PY" -m cragraph_lab bench embed-speed --dataset "$DATA/hotpotqa_migres200" --chunks 200 --repeats 3 \
    --threads 2 --out "$OUT/embed-speed.json"

echo "$SECONDS" > "$OUT/wall_s"
failed=$(tail -n +$((before + 1)) "$OUT/times.tsv" | awk -F'\t' '$3 != 0 { printf "%s ", $1 }')
if [ -n "$failed" ]; then
    echo "failed (see $OUT/logs/): $failed" >&2
    exit 1
fi
echo "done: python -m cragraph_lab.tables $OUT"
