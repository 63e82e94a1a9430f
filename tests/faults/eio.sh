#!/usr/bin/env bash
# EIO from the device, injected at the system-call boundary (eio_shim.c,
# LD_PRELOAD, test-only): there is no failing device here (no device-mapper,
# so no dm-error). Mid-run, after the first committed generation, every
# write and sync to the output files (output) or the checkpoint files
# (state) fails with EIO. The job must end within the bound with a message
# naming rank, host and "Input/output error"; once the "device" is healthy
# again the same command resumes exactly once.
#
# usage: eio.sh state|output SHIM BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
WHERE=${1:-}
SHIM=${2:-}
shift 2 || true
source "$(dirname "$0")/lib.sh"
[[ ($WHERE == state || $WHERE == output) && -f $SHIM ]] ||
  harness_usage "usage: eio.sh state|output SHIM BIN ORACLE ..."
fault_start eio_$WHERE "$@"
make_corpus 400000
OUT=$TMP/out STATE=$TMP/state TRIGGER=$TMP/device-broken
STALL=10
if [[ $WHERE == state ]]; then MATCH=$STATE/ckpt-; else MATCH=$OUT/; fi
ARGS=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.3
  --batch-bytes 8192 --stall-timeout $STALL)

MPI_EXTRA="-x LD_PRELOAD=$SHIM -x BLOOMSHARD_EIO_TRIGGER=$TRIGGER -x BLOOMSHARD_EIO_MATCH=$MATCH"
start_job e1 2 "${ARGS[@]}"
MPI_EXTRA=""
wait_until 60 "the first checkpoint" committed "$STATE"
: >"$TRIGGER"
T0=$(now)
wait_job "$JOB" 60 e1
T1=$(now)
((RC != 0)) || fail "the job exited 0 on a failing device"
if grep -Eq "rank [0-9]+ .*Input/output error" "$TMP/e1.log"; then
  HOW=error
elif [[ ${BLOOMSHARD_FAULTS_STRICT:-0} != 1 ]] &&
  grep -Eq "rank [0-9]+ on [^ ]+ .*no progress for .* while writing" "$TMP/e1.log"; then
  HOW=watchdog
  log "NOTE: ended by the stall watchdog after a store-side hang on EIO"
else
  fail "no message naming the rank and 'Input/output error'"
fi
echo "ENDED_BY $HOW"
detect "eio-$WHERE" "$(elapsed "$T0" "$T1")" $((STALL + 8))
log "ended $(elapsed "$T0" "$T1") s after the device failed (exit $RC, by the $HOW): $(grep -m1 -E 'rank [0-9]+ .*(Input/output|no progress)' "$TMP/e1.log" | cut -c1-220)"

rm -f "$TRIGGER"
resume_args "${ARGS[@]}"
run_job e2 3 120 "${RESUME[@]}"
((RC == 0)) || fail "the job exited $RC once the device was healthy"
grep -q "resuming checkpoint generation" "$TMP/e2.log" || fail "the restart did not resume"
check_outputs "$OUT"
log "device healthy again: resumed on 3 ranks, exactly once"
log "ok"
