#!/usr/bin/env bash
# End to end: `bloomshard query` against a confirming minhash state (a state
# written by `dedup --unit minhash --confirm-jaccard 0.8`), checked by
# minhash_oracle.py --query --confirm-jaccard (decontamination by
# near-duplicates: a record is a hit only when one of its band keys is in
# the state AND the 4-bit estimate against the form the state kept for that
# key, its first record's, reaches the state's T).
#
# usage: minhash_query_case.sh --case confirm --ranks N --bin BLOOMSHARD --dir TESTS_E2E
#                              [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# cases: confirm  a state of the first half of a clustered corpus (one reader,
#               so each key's form is its first record's in input order), on
#               the other of 1..3 ranks; the second half queried on N ranks
#               with --emit hits and --emit misses: byte for byte the oracle's,
#               the metrics' hits and candidates exact, and confirmation
#               matters (some records hit the state's bands only below T:
#               candidates > hits); a flipped byte of /tier2/forms makes the
#               query refuse the state (exit 1), naming the dataset
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse minhash_query_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --dir=DIR*" "$@"
ORACLE=$DIR/minhash_oracle.py
[[ -f $ORACLE ]] || harness_usage "no minhash_oracle.py in --dir $DIR"
"$PY" -c "import numpy, xxhash" 2>/dev/null || harness_usage "--python $PY lacks numpy or xxhash (use /usr/bin/python3)"
harness_tmp "minhash-query-$CASE-$RANKS" "minhash query $CASE, $RANKS ranks"
harness_marker
start=$SECONDS

oracle() { "$PY" "$ORACLE" "$@" || fail "the minhash oracle rejected the query's outputs"; }
json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

# query RANKS STATE IN OUT options...: runs the query; its exit code in JOB_RC.
query() {
  local ranks=$1 state=$2 in=$3 out=$4
  shift 4
  set +e
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" query --state "$state" --input "$in" \
    --output "$out" --metrics "$out.json" --batch-bytes 65536 "$@" >"$out.log" 2>&1
  JOB_RC=$?
  set -e
}

case_confirm() {
  "$PY" "$DIR/minhash_corpus.py" "$TMP/whole" --files 1 --clusters 80 --seed 50
  local lines half other=$((RANKS % 3 + 1))
  lines=$(wc -l <"$TMP/whole/part-000.jsonl")
  half=$((lines / 2))
  mkdir -p "$TMP/bench" "$TMP/probe"
  head -n "$half" "$TMP/whole/part-000.jsonl" >"$TMP/bench/part-000.jsonl"
  tail -n +$((half + 1)) "$TMP/whole/part-000.jsonl" >"$TMP/probe/part-000.jsonl"
  "$MPIEXEC" "$NP_FLAG" "$other" --oversubscribe "$BIN" dedup --input "$TMP/bench" \
    --output "$TMP/bench-out" --state "$TMP/st" --key-field text --unit minhash \
    --max-reject-fraction 0.1 --split-inputs off --confirm-jaccard 0.8 --slices 64 \
    >"$TMP/dedup.log" 2>&1 || { cat "$TMP/dedup.log" >&2; fail "the state's dedup run failed"; }
  # 1. --emit hits and --emit misses, against the oracle.
  local emit
  for emit in hits misses; do
    query "$RANKS" "$TMP/st" "$TMP/probe" "$TMP/q-$emit" --emit "$emit" --max-reject-fraction 0.1
    [[ $JOB_RC == 0 ]] || { cat "$TMP/q-$emit.log" >&2; fail "query --emit $emit exited $JOB_RC"; }
    oracle --query --confirm-jaccard 0.8 --emit "$emit" --state-input "$TMP/bench" \
      --input "$TMP/probe" --output "$TMP/q-$emit" --metrics "$TMP/q-$emit.json"
  done
  grep -q "confirmation (--confirm-jaccard 0.8 of the state)" "$TMP/q-hits.log" ||
    fail "the query's summary does not name the state's confirmation"
  local hits candidates unconfirmed
  hits=$(json_field "$TMP/q-hits.json" hits)
  candidates=$(json_field "$TMP/q-hits.json" candidates)
  unconfirmed=$(json_field "$TMP/q-hits.json" unconfirmed_hits)
  ((hits > 0 && candidates > hits && unconfirmed > 0)) ||
    fail "confirmation does not matter here: $hits hits, $candidates candidates, $unconfirmed" \
      "band hits below T (want 0 < hits < candidates)"
  log "query of a confirming state on $RANKS ranks (state from $other): $hits hits of" \
    "$candidates candidates, $unconfirmed band hits below T, hits and misses as the oracle's"
  # 2. Damaged forms: the query refuses the state, naming the dataset.
  cp -r "$TMP/st" "$TMP/st-bad"
  local run
  for run in "$TMP"/st-bad/run-*.h5; do
    "$PY" - "$run" <<'PY'
import sys, h5py
path = sys.argv[1]
with h5py.File(path, "r") as f:
    ds = f["/tier2/forms"]
    offset = ds.id.get_offset() + ds.shape[0] // 2
with open(path, "r+b") as f:
    f.seek(offset)
    b = f.read(1)
    f.seek(offset)
    f.write(bytes([b[0] ^ 0xFF]))
PY
  done
  query "$RANKS" "$TMP/st-bad" "$TMP/probe" "$TMP/q-bad"
  local said
  said=$(cat "$TMP/q-bad.log")
  [[ $JOB_RC == 1 && $said == *"/tier2/forms"* ]] ||
    { echo "$said" >&2; fail "a query of a state with a flipped forms byte: exit $JOB_RC, want 1 naming /tier2/forms"; }
  log "a flipped byte of /tier2/forms: the query refuses the state"
}

case "$CASE" in
  confirm) case_confirm ;;
  *) harness_usage "unknown --case $CASE" ;;
esac
log "done in $((SECONDS - start)) s"
