#!/usr/bin/env bash
# A state must not outlive its outputs silently (docs/reliability.md, "Crash
# states"): a checkpoint records the committed length of every output, and a
# start that would stand on it (the "already finished" start, a resume)
# first checks that each recorded output exists with at least that length.
# Real jobs through mpiexec, real files removed or cut:
#  1. a finished run whose zst output was deleted: the same command exits 1
#     naming the file, its committed length and "missing", and says how to
#     rebuild; never "nothing to do". The advice works: a new --state with
#     --overwrite rebuilds exactly-once outputs;
#  2. a finished run whose plain output was cut short: exit 1 naming the file,
#     its committed length and its real size;
#  3. the outputs put back: "nothing to do", exit 0 (the refusals came from
#     the damage, not from the check itself);
#  4. an unfinished run (SIGTERM held before its final checkpoint) whose gz
#     output was deleted: the resume refuses the same way before any work;
#     the file put back, it resumes to exactly-once outputs.
#
# usage: lost_outputs.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start lost_outputs "$@"
make_corpus 40000
ARGS=(--input "$IN" --key-field id --batch-bytes 65536 --checkpoint-rounds 4)
OUT=$TMP/out STATE=$TMP/state

# refused TAG FILE COMMITTED WHAT: the last job exited 1 naming FILE with its
# committed length and WHAT ("is missing", "is only N bytes"), with advice.
refused() {
  local log=$TMP/$1.log
  ((RC == 1)) || fail "$1: exit $RC, not 1 (a refusal)"
  grep -q "nothing to do" "$log" && fail "$1: said 'nothing to do' with an output lost"
  grep -qF "'$2' has $3 committed bytes in the checkpoint but $4" "$log" ||
    fail "$1: the refusal does not name '$2', its $3 committed bytes and '$4'"
  grep -qF -- "new --state" "$log" || fail "$1: the refusal does not say how to rebuild"
  grep -q "resuming checkpoint generation" "$log" && fail "$1: work started before the refusal"
  return 0
}

run_job first 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE"
((RC == 0)) || fail "the first run exited $RC"
check_outputs "$OUT"
cp -a "$OUT" "$TMP/good"
ZST=$(find "$OUT/zst" -type f | sort | head -n1)
PLAIN=$(find "$OUT/plain" -type f | sort | head -n1)

# --- 1. a finished run, one output deleted.
len=$(stat -c %s "$ZST")
((len > 0)) || fail "the zst output $ZST is empty: nothing to lose"
rm "$ZST"
run_job deleted 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE"
refused deleted "$ZST" "$len" "is missing"
log "1. finished, $ZST deleted: exit 1 naming it ($len committed bytes)"
run_job rebuilt 2 120 "${ARGS[@]}" --output "$OUT" --state "$TMP/state-new" --overwrite
((RC == 0)) || fail "the rebuild with a new --state and --overwrite exited $RC"
check_outputs "$OUT"
log "1. rebuilt with a new --state and --overwrite: exactly once"
rm -rf "$OUT" && cp -a "$TMP/good" "$OUT"

# --- 2. a finished run, one output cut short.
len=$(stat -c %s "$PLAIN")
truncate -s $((len / 2)) "$PLAIN"
run_job short 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE"
refused short "$PLAIN" "$len" "is only $((len / 2)) bytes"
log "2. finished, $PLAIN cut to $((len / 2)) of $len bytes: exit 1 naming it"

# --- 3. put back: the finished run is taken as finished again.
cp "$TMP/good/plain/$(basename "$PLAIN")" "$PLAIN"
run_job restored 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE"
((RC == 0)) || fail "the restored finished run exited $RC"
grep -q "nothing to do" "$TMP/restored.log" || fail "the restored run was not taken as finished"
log "3. outputs put back: 'nothing to do', exit 0"

# --- 4. an unfinished run, one output deleted before the resume.
OUT=$TMP/out4 STATE=$TMP/state4
BLOOMSHARD_FAULT_PAUSE_IN_FINISH=before-final-checkpoint start_job held 2 "${ARGS[@]}" \
  --output "$OUT" --state "$STATE"
wait_until 90 "the pause before the final checkpoint" \
  grep -q "fault pause at before-final-checkpoint" "$TMP/held.log"
committed "$STATE" || fail "no generation before the final checkpoint"
kill -TERM "$JOB"
wait_job "$JOB" 60 held
ranks_gone() { [[ -z $(rank_pids held) ]]; }
wait_until 30 "the ranks of the held job to end" ranks_gone
GZ=$(find "$OUT/gz" -type f | sort | head -n1)
cp "$GZ" "$TMP/gz-copy"
rm "$GZ"
run_job resume 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE"
((RC == 1)) || fail "4: the resume with $GZ deleted exited $RC, not 1"
grep -qE "'$GZ' has [1-9][0-9]* committed bytes in the checkpoint but is missing" \
  "$TMP/resume.log" || fail "4: the refusal does not name $GZ, its committed length and 'missing'"
log "4. unfinished, $GZ deleted: the resume exits 1 naming it"
cp "$TMP/gz-copy" "$GZ"
run_job resumed 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE"
((RC == 0)) || fail "4: the resume with the file put back exited $RC"
check_outputs "$OUT"
log "4. file put back: resumed to exactly-once outputs"
