#!/usr/bin/env bash
# End to end: `bloomshard merge` of confirming minhash states (written by
# `dedup --unit minhash --confirm-jaccard 0.8`): the union of the band keys,
# each keeping the form of the state given first for a key both hold, with
# /tier2/forms beside them.
#
# usage: minhash_merge_case.sh --case confirm --ranks N --bin BLOOMSHARD --dir TESTS_E2E
#                              [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# cases: confirm  a clustered corpus cut in thirds A, B, C (one file each,
#               one reader); state SA of A on N ranks, SB of B on another
#               count, merged (--from SA --from SB) on N ranks into SM; SAB is
#               one run over A then B (the concatenation). SM verifies (forms
#               checked), holds SAB's band keys, each key with the form of
#               the first --from state holding it (minhash_merge_forms.py
#               reads the run files; some keys are shared with other forms), and an incremental run over C
#               against SM (its plan line counting the state's forms it
#               loads) keeps byte for byte what one against SAB keeps (a
#               key both hold keeps A's form, its first record's in A then B),
#               with near copies removed and band hits unconfirmed; a merge of
#               SA with a state of another T, or with one that does not
#               confirm, is refused naming both states and values (exit 2,
#               nothing written)
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse minhash_merge_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --dir=DIR*" "$@"
"$PY" -c "import h5py" 2>/dev/null || harness_usage "--python $PY lacks h5py (use /usr/bin/python3)"
harness_tmp "minhash-merge-$CASE-$RANKS" "minhash merge $CASE, $RANKS ranks"
harness_marker
start=$SECONDS

json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
minhash_field() {
  "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["minhash_dedup"][sys.argv[2]])' "$@"
}

# dedup RANKS IN OUT options...: a minhash run with one reader; fails the
# test unless it exits 0.
dedup() {
  local ranks=$1 in=$2 out=$3
  shift 3
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --input "$in" --output "$out" \
    --metrics "$out/metrics.json" --key-field text --unit minhash --max-reject-fraction 0.1 \
    --split-inputs off --slices 64 --batch-bytes 65536 "$@" >"$out.log" 2>&1 ||
    { cat "$out.log" >&2; fail "dedup of $in on $ranks ranks failed"; }
}
# merge RANKS INTO FROM...: the merge; its exit code in JOB_RC, output in INTO.log.
merge() {
  local ranks=$1 into=$2
  shift 2
  local from=() f
  for f in "$@"; do from+=(--from "$f"); done
  set +e
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" merge "${from[@]}" --into "$into" \
    >"$into.log" 2>&1
  JOB_RC=$?
  set -e
}

case_confirm() {
  "$PY" "$DIR/minhash_corpus.py" "$TMP/whole" --files 1 --clusters 90 --seed 52
  local lines third other=$((RANKS % 3 + 1))
  lines=$(wc -l <"$TMP/whole/part-000.jsonl")
  third=$((lines / 3))
  mkdir -p "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/ab"
  head -n "$third" "$TMP/whole/part-000.jsonl" >"$TMP/a/part-000.jsonl"
  sed -n "$((third + 1)),$((2 * third))p" "$TMP/whole/part-000.jsonl" >"$TMP/b/part-000.jsonl"
  tail -n +$((2 * third + 1)) "$TMP/whole/part-000.jsonl" >"$TMP/c/part-000.jsonl"
  cat "$TMP/a/part-000.jsonl" "$TMP/b/part-000.jsonl" >"$TMP/ab/part-000.jsonl"
  local t8=(--confirm-jaccard 0.8)
  dedup "$RANKS" "$TMP/a" "$TMP/out-a" "${t8[@]}" --state "$TMP/sa"
  dedup "$other" "$TMP/b" "$TMP/out-b" "${t8[@]}" --state "$TMP/sb"
  dedup 1 "$TMP/ab" "$TMP/out-ab" "${t8[@]}" --state "$TMP/sab"
  # 1. The merge: verifies, holds the concatenation's keys and forms.
  merge "$RANKS" "$TMP/sm" "$TMP/sa" "$TMP/sb"
  [[ $JOB_RC == 0 ]] || { cat "$TMP/sm.log" >&2; fail "merge of two confirming states exited $JOB_RC"; }
  "$BIN" verify --state "$TMP/sm" >"$TMP/verify.log" 2>&1 ||
    { cat "$TMP/verify.log" >&2; fail "the merged confirming state does not verify"; }
  grep -q "confirmation forms of 56 bytes checked" "$TMP/verify.log" ||
    { cat "$TMP/verify.log" >&2; fail "verify did not check the merged state's forms"; }
  local keys_m keys_ab
  "$BIN" info --json --state "$TMP/sm" >"$TMP/sm.json"
  "$BIN" info --json --state "$TMP/sab" >"$TMP/sab.json"
  keys_m=$(json_field "$TMP/sm.json" exact_keys)
  keys_ab=$(json_field "$TMP/sab.json" exact_keys)
  [[ $keys_m == "$keys_ab" ]] || fail "the merged state holds $keys_m band keys, A then B $keys_ab"
  # Each key's form is that of the state given first that holds it.
  "$PY" "$DIR/minhash_merge_forms.py" "$TMP/sm" "$TMP/sa" "$TMP/sb" ||
    fail "the merged forms do not follow the rule (first --from state's form)"
  # 2. An incremental run over C: the same bytes against SM as against SAB.
  dedup "$other" "$TMP/c" "$TMP/out-cm" "${t8[@]}" --state "$TMP/sm"
  dedup "$RANKS" "$TMP/c" "$TMP/out-cab" "${t8[@]}" --state "$TMP/sab"
  grep -q "incremental run" "$TMP/out-cm.log" || fail "the run over C did not continue the merged state"
  grep -q "; the state's forms of [0-9.]*k band keys loaded ~[0-9.]* MiB/rank" "$TMP/out-cm.log" ||
    fail "the plan line of the run over C does not count the forms it loads from the state"
  cmp -s "$TMP/out-cm/part-000.jsonl" "$TMP/out-cab/part-000.jsonl" ||
    fail "C against the merged state kept other records than C against one run over A then B"
  local dropped unconfirmed
  dropped=$(json_field "$TMP/out-cm/metrics.json" dropped)
  unconfirmed=$(minhash_field "$TMP/out-cm/metrics.json" unconfirmed_hits)
  ((dropped > 0 && unconfirmed > 0)) ||
    fail "C removed $dropped records with $unconfirmed unconfirmed hits (want both > 0)"
  log "merged SA ($RANKS ranks) + SB ($other): $keys_m band keys, verified; C against it keeps" \
    "the bytes of C against A then B ($dropped removed, $unconfirmed hits below T)"
  # 3. Another T, or no confirmation, beside a confirming state: refused.
  dedup "$RANKS" "$TMP/a" "$TMP/out-a7" --confirm-jaccard 0.7 --state "$TMP/sa7"
  dedup "$RANKS" "$TMP/a" "$TMP/out-an" --state "$TMP/san"
  local pair said
  for pair in "sa7|'$TMP/sa' has 0.8, '$TMP/sa7' has 0.7" "san|'$TMP/sa' has 0.8, '$TMP/san' has off"; do
    merge "$RANKS" "$TMP/sx" "$TMP/sa" "$TMP/${pair%%|*}"
    said=$(cat "$TMP/sx.log")
    [[ $JOB_RC == 2 && $said == *"cannot merge '$TMP/${pair%%|*}' with '$TMP/sa': --confirm-jaccard differs: ${pair#*|}"* && ! -e $TMP/sx ]] ||
      { echo "$said" >&2; fail "merge of SA with ${pair%%|*}: exit $JOB_RC, want 2 naming both"; }
  done
  log "another --confirm-jaccard, or none, refused naming both states and values"
}

case "$CASE" in
  confirm) case_confirm ;;
  *) harness_usage "unknown --case $CASE" ;;
esac
log "done in $((SECONDS - start)) s"
