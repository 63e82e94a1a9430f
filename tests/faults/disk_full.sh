#!/usr/bin/env bash
# A full disk mid-run, for real: the state dir (checkpoint writes) or the
# output dir (output appends, fsync at the cut) on a small loop-mounted
# ext4 that the test fills to the last block after the first committed
# generation. The job must end within the bound (no hang), non-zero, with a
# message naming rank, host and "No space left on device"; LATEST stays a
# generation that loads; after freeing the space the same command resumes
# exactly once. Root only (loop devices); exits 77 (skipped) elsewhere.
#
# usage: disk_full.sh state|output BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
WHERE=${1:-}
shift || true
source "$(dirname "$0")/lib.sh"
[[ $WHERE == state || $WHERE == output ]] || harness_usage "usage: disk_full.sh state|output BIN ORACLE ..."
fault_start disk_full_$WHERE "$@"
make_corpus 400000
OUT=$TMP/out STATE=$TMP/state
STALL=10
FULL=$TMP/smallfs # a mount point holds lost+found: the dirs live below it
mount_small_fs "$FULL" 96
if [[ $WHERE == state ]]; then STATE=$FULL/state; else OUT=$FULL/out; fi
ARGS=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.3
  --batch-bytes 8192 --stall-timeout $STALL)

start_job d1 2 "${ARGS[@]}"
wait_until 60 "the first checkpoint" committed "$STATE"
read -r G0 <"$STATE/LATEST"
fill_fs "$FULL"
T0=$(now)
log "filled $FULL ($(df -h --output=avail "$FULL" | tail -1 | tr -d ' ') left) after generation $G0"
wait_job "$JOB" 60 d1
T1=$(now)
((RC != 0)) || {
  # The job may have finished between the checkpoint and the fill.
  grep -q " records, " "$TMP/d1.log" && log "the job finished before the disk was full: inconclusive"
  fail "the job exited 0 on a full disk"
}
# The program's own message names rank, host and cause. Where the store
# still hangs after ENOSPC (the error surfaces on one rank, the others wait
# in a collective), the stall watchdog ends the
# job and names rank, host and the checkpoint write; MPI-IO's own line
# names the cause when the MPI-IO path wrote (the O_DIRECT path prints
# nothing). BLOOMSHARD_FAULTS_STRICT=1 accepts only the program's message.
if grep -Eq "rank [0-9]+.*No space left on device|No space left on device.*rank [0-9]+" "$TMP/d1.log"; then
  HOW=error
elif [[ ${BLOOMSHARD_FAULTS_STRICT:-0} != 1 ]] &&
  grep -Eq "rank [0-9]+ on [^ ]+ .*no progress for .* while writing" "$TMP/d1.log"; then
  HOW=watchdog
  grep -q "No space left on device" "$TMP/d1.log" || HOW="watchdog, cause not named"
  log "NOTE: ended by the stall watchdog after a store-side hang on ENOSPC"
else
  fail "no message naming the rank and 'No space left on device'"
fi
echo "ENDED_BY $HOW"
detect "disk-full-$WHERE" "$(elapsed "$T0" "$T1")" $((STALL + 8))
log "ended $(elapsed "$T0" "$T1") s after the disk filled (exit $RC, by the $HOW): $(grep -m1 -E 'rank [0-9]+ .*(No space|no progress)' "$TMP/d1.log" | cut -c1-220)"
compgen -G "$STATE/*.h5.tmp" >/dev/null && log "a checkpoint temp file is left (the next commit replaces it)"

rm -f "$FULL/_filler" "$FULL/_filler2"
resume_args "${ARGS[@]}"
run_job d2 3 120 "${RESUME[@]}"
((RC == 0)) || fail "the job exited $RC after the space was freed"
grep -q "resuming checkpoint generation" "$TMP/d2.log" || fail "the restart did not resume"
check_outputs "$OUT"
log "after freeing the space: resumed on 3 ranks, exactly once"
log "ok"
