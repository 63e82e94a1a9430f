#!/usr/bin/env bash
# End-to-end cases of `bloomshard dedup --unit paragraph`,
# checked by paragraph_oracle.py (its own split, normalization, first
# occurrence, removal and fraction rule) and against the metrics JSON.
#
# usage: paragraph_case.sh --case NAME --ranks N --bin BLOOMSHARD --dir TESTS_E2E
#                          [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# cases: dedup  on N ranks: (1) one input file, so one reader and input order:
#               byte-exact outputs (newline split, ws, --min-paragraph-bytes 8,
#               --drop-if-removed-fraction 0.6) and the paragraph counters;
#               (2) four files (one .gz) read in parallel: every record once, each
#               paragraph kept exactly once, blankline split; the kept paragraph
#               set is the 1-rank one; (3) the state keeps the paragraph scheme:
#               another --min-paragraph-bytes is refused naming both values,
#               the same one continues incrementally; (4, 2 ranks) two merged
#               paragraph states hold one run's paragraph set, merging with a
#               record state and querying a paragraph state are refused
#        kill   4 SIGKILLs of all ranks at random moments of a checkpointing run
#               (--checkpoint-rounds 1), resumed on 1..3 ranks each time, then run
#               to the end on N ranks: exactly once (invariants) with the key
#               set of an uninterrupted run
#        annotate  one input file, filter vs --mode annotate (both formats) on N
#               ranks: paragraph_annotate_check.py applies the Dolma character
#               spans and must get filter mode's records; the byte spans and the
#               "duplicate" (dropped) flags agree; kept/dropped counters equal
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse paragraph_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --dir=DIR*" "$@"
ORACLE=$DIR/paragraph_oracle.py
[[ -f $ORACLE ]] || harness_usage "no paragraph_oracle.py in --dir $DIR"
harness_tmp "para-$CASE-$RANKS" "paragraph $CASE, $RANKS ranks"
harness_marker
start=$SECONDS

corpus() { # DIR options...
  local out=$1
  shift
  "$PY" "$DIR/paragraph_corpus.py" "$out" "$@"
}

# dedup IN OUT RANKS options...: runs the job; its exit code in JOB_RC.
dedup() {
  local in=$1 out=$2 ranks=$3
  shift 3
  set +e
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --input "$in" --output "$out" \
    --metrics "$out/metrics.json" --key-field text --unit paragraph "$@" >"$out.log" 2>&1
  JOB_RC=$?
  set -e
}
dedup_ok() {
  dedup "$@"
  [[ $JOB_RC == 0 ]] || { cat "$2.log" >&2; fail "dedup exited $JOB_RC (want 0)"; }
}
oracle() { "$PY" "$ORACLE" "$@" || fail "the paragraph oracle rejected the outputs"; }

EXACT=(--paragraph-split newline --text-normalize ws --min-paragraph-bytes 8
  --drop-if-removed-fraction 0.6)
EXACT_ORACLE=(--split newline --normalize ws --min-paragraph-bytes 8
  --drop-if-removed-fraction 0.6)
BLANK=(--paragraph-split blankline)
BLANK_ORACLE=(--split blankline)

case_dedup() {
  corpus "$TMP/one" --files 1 --records 1500 --seed 11
  corpus "$TMP/four" --files 4 --records 2000 --seed 12 --gz
  # 1. One reader: the job's order is the input order, whatever the owners.
  dedup_ok "$TMP/one" "$TMP/out-one" "$RANKS" "${EXACT[@]}" --batch-bytes 32768 --slices 64
  oracle --exact --input "$TMP/one" --output "$TMP/out-one" "${EXACT_ORACLE[@]}" \
    --metrics "$TMP/out-one/metrics.json"
  local rejects
  rejects=$(cat "$TMP"/out-one/_rejects/*.jsonl | wc -l)
  [[ $rejects == 3 ]] || fail "$rejects reject lines, want 3 (text 42, null, missing)"
  log "one file: byte-exact against the oracle; 3 rejects"
  # 2. Several readers: exactly once, each paragraph kept once; the kept
  #    paragraph set (tier-2 keys) equals one rank's.
  dedup_ok "$TMP/four" "$TMP/out-four" "$RANKS" "${BLANK[@]}" --batch-bytes 32768 --slices 64
  oracle --input "$TMP/four" --output "$TMP/out-four" "${BLANK_ORACLE[@]}" \
    --metrics "$TMP/out-four/metrics.json"
  if [[ $RANKS == 1 ]]; then
    oracle --exact --input "$TMP/four" --output "$TMP/out-four" "${BLANK_ORACLE[@]}" \
      --metrics "$TMP/out-four/metrics.json"
  fi
  log "four files: exactly once, each paragraph kept once"
  # 3. The state keeps the paragraph scheme.
  dedup_ok "$TMP/one" "$TMP/out-st" "$RANKS" "${EXACT[@]}" --state "$TMP/state"
  mkdir -p "$TMP/today"
  corpus "$TMP/today" --files 1 --records 400 --seed 13
  dedup "$TMP/today" "$TMP/out-today" "$RANKS" --paragraph-split newline --text-normalize ws \
    --min-paragraph-bytes 9 --drop-if-removed-fraction 0.6 --state "$TMP/state"
  local said
  said=$(cat "$TMP/out-today.log")
  [[ $JOB_RC == 2 && $said == *"--min-paragraph-bytes differs: the state has 8, this job asks for 9"* ]] ||
    { echo "$said" >&2; fail "another --min-paragraph-bytes on a paragraph state: exit $JOB_RC"; }
  rm -rf "$TMP/out-today"
  dedup_ok "$TMP/today" "$TMP/out-today" "$RANKS" "${EXACT[@]}" --state "$TMP/state"
  said=$(cat "$TMP/out-today.log")
  [[ $said == *"incremental run"* ]] || fail "the paragraph state was not continued"
  local info
  info=$("$BIN" info --state "$TMP/state" 2>&1)
  [[ $info == *"unit=paragraph/v1; split=newline/v1; min-paragraph-bytes=8; drop-if-removed-fraction=0.6"* ]] ||
    { echo "$info" >&2; fail "info does not show the paragraph scheme"; }
  log "a paragraph state refuses another --min-paragraph-bytes and continues with its own"
  [[ $RANKS == 2 ]] || return 0
  # 4. (2 ranks only) merge: two paragraph states give the paragraph set of
  #    one run over both inputs; a record state is refused; query refuses.
  mkdir -p "$TMP/both"
  cp "$TMP/one/part-000.jsonl" "$TMP/both/a.jsonl"
  cp "$TMP/today/part-000.jsonl" "$TMP/both/b.jsonl"
  dedup_ok "$TMP/both" "$TMP/out-both" "$RANKS" "${EXACT[@]}"
  dedup_ok "$TMP/today" "$TMP/out-t2" "$RANKS" "${EXACT[@]}" --state "$TMP/st-today"
  rm -rf "$TMP/state"
  dedup_ok "$TMP/one" "$TMP/out-o2" "$RANKS" "${EXACT[@]}" --state "$TMP/st-one"
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" merge --from "$TMP/st-one" \
    --from "$TMP/st-today" --into "$TMP/st-merged" >"$TMP/merge.log" 2>&1 ||
    { cat "$TMP/merge.log" >&2; fail "merging two paragraph states failed"; }
  local merged want
  merged=$("$BIN" info --json --state "$TMP/st-merged" |
    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["exact_keys"])')
  want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tier2_keys"])' \
    "$TMP/out-both/metrics.json")
  [[ $merged == "$want" ]] || fail "merged state holds $merged paragraph keys, one run $want"
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$TMP/today" \
    --output "$TMP/out-rec" --key-field text --key-digest xxh3-128 --text-normalize ws \
    --state "$TMP/st-rec" >/dev/null 2>&1 || true
  set +e
  said=$("$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" merge --from "$TMP/st-one" \
    --from "$TMP/st-rec" --into "$TMP/st-bad" 2>&1)
  local rc=$?
  set -e
  [[ $rc != 0 && $said == *"key unit (--unit) differs"* ]] ||
    { echo "$said" >&2; fail "merging a paragraph and a record state: exit $rc"; }
  set +e
  said=$("$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" query --state "$TMP/st-one" \
    --input "$TMP/today" --output "$TMP/out-q" 2>&1)
  rc=$?
  set -e
  [[ $rc == 2 && $said == *"paragraph keys"* ]] ||
    { echo "$said" >&2; fail "query on a paragraph state: exit $rc, want 2"; }
  log "merge: $merged paragraph keys as one run over both inputs; record state and query refused"
}

case_kill() {
  corpus "$TMP/in" --files 3 --records 2000 --seed 21 --gz
  local args=(--input "$TMP/in" --key-field text --unit paragraph "${BLANK[@]}"
    --batch-bytes 32768 --slices 32 --checkpoint-rounds 1)
  local att=0 kills=0 marker r
  RANDOM=7
  local gens=""
  while ((kills < 4)); do
    att=$((att + 1))
    marker=$MARK/bs-a$att
    local before
    before=$(cat "$TMP/state/LATEST" 2>/dev/null || echo none)
    ln -s "$BIN" "$marker"
    # Every attempt names the metrics file: on a fast machine the attempt
    # that finishes the run is the last one, and the final run below then
    # has nothing to do (and writes none).
    timeout -s KILL 60 "$MPIEXEC" "$NP_FLAG" $((RANDOM % 3 + 1)) --oversubscribe "$marker" dedup \
      "${args[@]}" --output "$TMP/out" --state "$TMP/state" --metrics "$TMP/out/metrics.json" \
      >"$TMP/att-$att.log" 2>&1 &
    local job=$!
    # Kill once this attempt committed a generation of its own (it made
    # progress past its resume point), a random 0-300 ms later.
    local waited=0
    while kill -0 $job 2>/dev/null && [[ $(cat "$TMP/state/LATEST" 2>/dev/null || echo none) == "$before" ]] &&
      ((waited < 5000)); do
      sleep 0.01
      waited=$((waited + 10))
    done
    r=$((RANDOM % 300))
    sleep "0.$(printf '%03d' $r)"
    if kill -0 $job 2>/dev/null; then
      kill_marker "$marker"
      kills=$((kills + 1))
      gens+=" $(cat "$TMP/state/LATEST" 2>/dev/null || echo -)"
    fi
    wait $job 2>/dev/null || true
    if grep -q "already finished" "$TMP/att-$att.log" || grep -q "records," "$TMP/att-$att.log"; then
      break  # finished before enough kills: the outputs are checked below
    fi
    ((att < 30)) || fail "no progress after $att attempts"
  done
  log "$kills kills in $att attempts (LATEST at each kill:$gens) after $((SECONDS - start)) s"
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup "${args[@]}" --output "$TMP/out" \
    --state "$TMP/state" --metrics "$TMP/out/metrics.json" >"$TMP/final.log" 2>&1 ||
    { cat "$TMP/final.log" >&2; fail "the final resume failed"; }
  local metrics=(--metrics "$TMP/out/metrics.json")
  # A kill after the finishing generation and before the metrics write
  # leaves a finished run without metrics, and the starts after it write
  # none (docs/reliability.md, "Not covered"): the outputs and the state's
  # keys are still checked below.
  if [[ ! -f $TMP/out/metrics.json ]] && grep -q "already finished" "$TMP/final.log"; then
    log "the run was finished by a killed attempt: no metrics to check"
    metrics=()
  fi
  oracle --input "$TMP/in" --output "$TMP/out" "${BLANK_ORACLE[@]}" "${metrics[@]}"
  dedup_ok "$TMP/in" "$TMP/ref" 1 "${BLANK[@]}"
  local a b
  a=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tier2_keys"])' "$TMP/ref/metrics.json")
  "$BIN" info --json --state "$TMP/state" >"$TMP/info.json"
  b=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["exact_keys"])' "$TMP/info.json")
  [[ $a == "$b" ]] || fail "the killed run holds $b paragraph keys, an uninterrupted one $a"
  log "after the kills: exactly once, each paragraph kept once, $b keys as uninterrupted"
}

case_annotate() {
  corpus "$TMP/one" --files 1 --records 1500 --seed 11
  local opts=("${EXACT[@]}" --batch-bytes 32768 --slices 64)
  dedup_ok "$TMP/one" "$TMP/out-f" "$RANKS" "${opts[@]}"
  dedup_ok "$TMP/one" "$TMP/out-b" "$RANKS" "${opts[@]}" --mode annotate
  dedup_ok "$TMP/one" "$TMP/out-d" "$RANKS" "${opts[@]}" --mode annotate --annotate-format dolma
  "$PY" "$DIR/paragraph_annotate_check.py" "$TMP/one/part-000.jsonl" "$TMP/out-f/part-000.jsonl" \
    "$TMP/out-b/part-000.jsonl" "$TMP/out-d/part-000.jsonl" ||
    fail "the attribute files do not match filter mode"
  local m
  for m in kept dropped; do
    local a b
    a=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$TMP/out-f/metrics.json" $m)
    b=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$TMP/out-b/metrics.json" $m)
    [[ $a == "$b" ]] || fail "metrics $m: filter mode $a, annotate mode $b"
  done
  log "annotate: both attribute formats reproduce filter mode's cuts and drops"
}

case "$CASE" in
  dedup | kill | annotate) "case_$CASE" ;;
  *) echo "paragraph_case.sh: unknown case '$CASE'" >&2; exit 2 ;;
esac
log "PASS in $((SECONDS - start)) s"
