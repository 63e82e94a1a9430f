#!/usr/bin/env bash
# The join of a split input on a failing device, through the real binary:
# the job pauses before the join (BLOOMSHARD_FAULT_PAUSE_IN_FINISH, the test
# hook), then every write to the mirrored output fails with EIO (eio_shim.c
# by LD_PRELOAD: no failing device can be had here). The job must fail at
# once, naming the mirrored output and "Input/output error" (or, from
# another rank, a failed join): never retry a failing write forever (a
# mutant of range_join.cpp's EINTR retry did, and the job hung in the
# join), never exit 0. The trigger file also releases the hook's pause
# (BLOOMSHARD_FAULT_PAUSE_RELEASE): the join starts once writes fail.
#
# usage: split_join_eio.sh BIN SHIM [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse split_join_eio.sh "BIN SHIM --ranks=RANKS:2" "$@"
[[ -f $SHIM ]] || harness_usage "no EIO shim at '$SHIM'"
harness_tmp split-join-eio "split join on EIO, $RANKS ranks"
cd "$TMP" || exit 1

"$BIN" synth --records 20000 --dup-rate 0.3 --files 1 --compress none --seed 3 --out in >/dev/null
TRIGGER=$TMP/device-broken
MIRROR=$TMP/out/part-00000.jsonl
timeout 120 "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe \
  -x LD_PRELOAD="$SHIM" -x BLOOMSHARD_EIO_TRIGGER="$TRIGGER" -x BLOOMSHARD_EIO_MATCH="$MIRROR" \
  -x BLOOMSHARD_FAULT_PAUSE_IN_FINISH=before-join -x BLOOMSHARD_FAULT_PAUSE_RELEASE="$TRIGGER" \
  "$BIN" dedup --input in --output out --state S --key-field id --split-min-bytes 65536 \
  --batch-bytes 65536 >job.log 2>&1 &
JOB=$!
for ((i = 0; i < 600; ++i)); do
  grep -qs "fault pause at before-join" job.log && break
  kill -0 "$JOB" 2>/dev/null || break
  sleep 0.1
done
grep -qs "fault pause at before-join" job.log || { cat job.log >&2; fail "the job never paused before the join"; }
: >"$TRIGGER"
RC=0
wait "$JOB" || RC=$?
cat job.log
((RC != 124)) || fail "the job hung in the join on a failing device (killed after 120 s)"
((RC != 0)) || fail "the job exited 0 although the mirrored output could not be written"
# The failing rank names the file and the error; when another rank aborts
# the job first, its line may be lost (MPI_Abort), and that rank's own line
# says a rank failed the join.
if grep -q "cannot write the mirrored output 'out/part-00000.jsonl': Input/output error" job.log; then
  log "ok: exit $RC, the mirrored output and EIO named"
else
  grep -q "error: another rank failed to join a split input" job.log ||
    fail "the failure names neither the mirrored output and EIO nor a failed join"
  log "ok: exit $RC, a failed join reported (the failing rank's line lost to MPI_Abort)"
fi
