#!/usr/bin/env bash
# The yardstick of the job-level speed figure of --unit minhash
# (docs/performance.md, "Near-duplicates") computes what the job computes:
# on a small corpus of tests/bench/minhash_bench_corpus.py (the generator of
# the 1 GB benchmark corpus, near copies across files, accented words),
# tests/bench/python_minhash_dedup.py (the Python/numpy job in one process)
# keeps byte for byte the records `bloomshard dedup --unit minhash` keeps on
# one rank (one reader: the input order), and removes some. Not timed.
#
# usage: minhash_bench_case.sh --bin BLOOMSHARD --dir TESTS_E2E
#                              [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse minhash_bench_case.sh "--ranks=RANKS:1 --bin=BIN* --dir=DIR*" "$@"
BENCH=$DIR/../bench
[[ -f $BENCH/python_minhash_dedup.py ]] || harness_usage "no tests/bench beside --dir $DIR"
"$PY" -c "import numpy, xxhash" 2>/dev/null || harness_usage "--python $PY lacks numpy or xxhash (use /usr/bin/python3)"
harness_tmp "minhash-bench" "minhash bench yardstick"

"$PY" "$BENCH/minhash_bench_corpus.py" --bytes 1500000 --block-clusters 100 --files 3 --seed 3 --out-dir "$TMP/in" \
  >"$TMP/gen.log" || fail "the corpus generator failed"
"$PY" "$BENCH/python_minhash_dedup.py" "$TMP/in" "$TMP/py.jsonl" >"$TMP/py.log" ||
  fail "the Python/numpy job failed"
rc=0
mpi 1 dedup --input "$TMP/in" --output "$TMP/out" --key-field text --unit minhash \
  >"$TMP/job.log" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$TMP/job.log" >&2; fail "dedup --unit minhash exited $rc"; }
cat "$TMP/out/part-00.jsonl" "$TMP/out/part-01.jsonl" "$TMP/out/part-02.jsonl" >"$TMP/job.jsonl"
cmp -s "$TMP/job.jsonl" "$TMP/py.jsonl" ||
  fail "the Python/numpy job keeps other records than bloomshard ($(cat "$TMP/py.log"))"
read -r _ records _ kept _ <"$TMP/py.log"
((kept < records)) || fail "the corpus has no near copy to remove ($(cat "$TMP/py.log"))"
log "the Python/numpy job keeps the job's $kept of $records records, byte for byte"
