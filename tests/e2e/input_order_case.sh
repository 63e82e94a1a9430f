#!/usr/bin/env bash
# The one order (docs/inputs.md "Which copy of a duplicate is kept"): the
# kept copy of a key is its first copy with the inputs in their walked,
# sorted order and the records by position, whatever the rank count.
#
# usage: input_order_case.sh --case NAME --ranks N --bin BLOOMSHARD --dir E2E_DIR
#                            [--mpiexec M] [--np-flag -n] [--python P]
# cases: records  6 inputs (plain, .gz, .zst in turn) and a bigger plain one
#                 first in the order, split into ranges at N > 1 ranks; 30 %
#                 duplicates spread over all of them, every copy different
#                 in its other fields; small batches so that later inputs'
#                 copies reach their owners first. Every output equals the
#                 oracle (input_order_corpus.py: awk '!seen[$key]++' over the
#                 inputs in order) and is byte for byte the 1-rank run's;
#                 at N > 1 copies were retracted and left out (metrics).
#         refusals  --kept-copy first with --state, annotate mode or paragraphs,
#                 and an unknown value: exit 2 naming the option, nothing written.
# Set KEEP_TMP=1 to keep the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_order_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --dir=EDIR*" "$@"
CORPUS=$EDIR/input_order_corpus.py
[[ -f $CORPUS ]] || harness_usage "no input_order_corpus.py in --dir $EDIR"
command -v zstd >/dev/null || harness_usage "needs the zstd command"
harness_tmp "input-order-$CASE-$RANKS" "input order $CASE, $RANKS ranks"

json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

case $CASE in
  records)
    "$PY" "$CORPUS" make "$TMP/in" --files 6 --records 3000 --big-records 12000 --seed 7
    ARGS=(--input "$TMP/in" --key-field id --kept-copy first --batch-bytes 65536 --split-min-bytes 65536)
    mpi 1 dedup "${ARGS[@]}" --output "$TMP/out1" --metrics "$TMP/m1.json" >"$TMP/r1.log" 2>&1 ||
      fail "1-rank run failed: $(cat "$TMP/r1.log")"
    "$PY" "$CORPUS" check "$TMP/in" "$TMP/out1" || fail "1 rank: not the first copies in input order"
    mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/outN" --metrics "$TMP/mN.json" \
      >"$TMP/rN.log" 2>&1 || fail "$RANKS-rank run failed: $(cat "$TMP/rN.log")"
    "$PY" "$CORPUS" check "$TMP/in" "$TMP/outN" ||
      fail "$RANKS ranks: not the first copies in input order ($(cat "$TMP/rN.log"))"
    diff -r "$TMP/out1" "$TMP/outN" -x _rejects >/dev/null ||
      fail "$RANKS ranks: outputs differ from the 1-rank run's bytes"
    retracted=$(json_field "$TMP/mN.json" retracted)
    log "$RANKS ranks: $retracted kept copies retracted for an earlier copy"
    [[ $RANKS == 1 || $retracted -gt 0 ]] || fail "no copy was retracted: the case tests nothing"
    [[ $(json_field "$TMP/m1.json" kept) == $(json_field "$TMP/mN.json" kept) ]] ||
      fail "kept counts differ"
    ;;
  refusals)
    # --kept-copy first where it cannot apply yet is refused before any
    # work (exit 2, naming the option), never run quietly in arrival order.
    "$PY" "$CORPUS" make "$TMP/in" --files 2 --records 200 --big-records 200 --seed 7
    for extra in "--state $TMP/st" "--mode annotate" "--unit paragraph" "BOGUS"; do
      args=(--input "$TMP/in" --key-field id --output "$TMP/out" --kept-copy first)
      # shellcheck disable=SC2206
      [[ $extra == BOGUS ]] && args[-1]=sometimes || args+=($extra)
      rc=0
      mpi "$RANKS" dedup "${args[@]}" >"$TMP/r.log" 2>&1 || rc=$?
      [[ $rc == 2 ]] || fail "--kept-copy with '$extra': exit $rc, want 2 ($(cat "$TMP/r.log"))"
      grep -q -- "--kept-copy" "$TMP/r.log" || fail "'$extra': the refusal names no option: $(cat "$TMP/r.log")"
      [[ ! -e $TMP/out && ! -e $TMP/st ]] || fail "'$extra': the refused run wrote an output or state"
    done
    ;;
  *) harness_usage "unknown case $CASE" ;;
esac
log "ok in $SECONDS s"
