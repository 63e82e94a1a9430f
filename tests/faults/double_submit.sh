#!/usr/bin/env bash
# Two instances of one run started together (a double submission, an
# overlapping chain.sh): exactly one writes. With --lock-wait 0 the other is
# refused at once with exit 5 naming the holder; with the default it waits
# for the first to finish and then finds nothing to do. Both with --state
# (lock STATE/LOCK) and without (lock OUTPUT/_bloomshard.lock).
#
# usage: double_submit.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start double_submit "$@"
make_corpus 150000 # enough for the two starts to overlap; CI time

pair() { # LABEL LOCKWAIT_OF_BOTH args...
  local label=$1 wait=$2 ja jb rca rcb
  shift 2
  start_job "$label-a" 2 "$@" --lock-wait "$wait"
  ja=$JOB
  start_job "$label-b" 2 "$@" --lock-wait "$wait"
  jb=$JOB
  wait_job "$ja" 120 "$label-a"
  rca=$RC
  wait_job "$jb" 120 "$label-b"
  rcb=$RC
  PAIR_RCS="$rca $rcb"
  # The loser's log says who held the run.
  LOSER_LOG=$TMP/$label-b.log
  [[ $rcb == 0 && $rca != 0 ]] && LOSER_LOG=$TMP/$label-a.log
  [[ $rca == 0 && $rcb == 0 ]] && grep -q "waiting up to" "$TMP/$label-a.log" &&
    LOSER_LOG=$TMP/$label-a.log
  return 0
}

OUT=$TMP/out STATE=$TMP/state
ARGS=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.3
  --batch-bytes 8192)
pair short 0 "${ARGS[@]}"
[[ $PAIR_RCS == "0 5" || $PAIR_RCS == "5 0" ]] || fail "with --state and --lock-wait 0: exits $PAIR_RCS, want one 0 and one 5"
grep -Eq "still holds .*host [^,]+, pid [0-9]+, since .* UTC" "$LOSER_LOG" ||
  fail "the refused instance does not name the holder"
check_outputs "$OUT"
log "--state, --lock-wait 0: exits $PAIR_RCS; $(grep -m1 -o 'still holds.*(epoch [0-9]*)' "$LOSER_LOG")"

rm -rf "$OUT" "$STATE"
pair long 120 "${ARGS[@]}"
[[ $PAIR_RCS == "0 0" ]] || fail "with --state and --lock-wait 120: exits $PAIR_RCS, want 0 0"
grep -q "waiting up to 120 s" "$LOSER_LOG" || fail "the second instance did not wait"
grep -q "already finished for these inputs; nothing to do" "$LOSER_LOG" ||
  fail "the second instance did not find the run finished"
check_outputs "$OUT"
log "--state, --lock-wait 120: the second waited for the first, then had nothing to do"

rm -rf "$OUT" "$STATE"
pair lease 0 "${ARGS[@]}" --fencing lease
[[ $PAIR_RCS == "0 5" || $PAIR_RCS == "5 0" ]] || fail "with --fencing lease: exits $PAIR_RCS, want one 0 and one 5"
grep -q "mode lease" "$STATE/LOCK" || fail "the lock file is not a lease"
check_outputs "$OUT"
# The finished holder handed the lease back: a new start does not wait.
run_job lease-again 2 60 "${ARGS[@]}" --fencing lease --lock-wait 0
((RC == 0)) || fail "a start after the lease holder ended exited $RC (lease not handed back?)"
log "--fencing lease: exits $PAIR_RCS; the lease was handed back at the end"

OUT2=$TMP/out-nostate
pair nostate 0 --input "$IN" --output "$OUT2" --key-field id --batch-bytes 8192
[[ $PAIR_RCS == "0 5" || $PAIR_RCS == "5 0" ]] || fail "without --state: exits $PAIR_RCS, want one 0 and one 5"
grep -qF "$OUT2/_bloomshard.lock" "$LOSER_LOG" || fail "the refusal does not name the output dir's lock"
[[ ! -e $OUT2/_bloomshard.lock ]] || fail "the finished run left its lock file in the output dir"
check_outputs "$OUT2"
log "no --state: exits $PAIR_RCS, the output dir's lock fenced the second"
log "ok"
