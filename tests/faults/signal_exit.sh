#!/usr/bin/env bash
# Exit status through the launcher: SIGINT, SIGTERM and SIGUSR1 sent to a
# running 2-rank dedup job after its first checkpoint, one TARGET per test:
#   launch        the pid of `bloomshard launch -- mpiexec ...` (the caller's child);
#                 also SIGKILL to it (the caller sees 137; mpiexec gets SIGUSR1
#                 as the wrapper's death signal, so the ranks still checkpoint),
#                 and its refusals: no command (2), a command that cannot run (127)
#   launch-group  that wrapper's process group (Ctrl-C, `kill -- -PGID`)
#   ranks         the ranks' pids, under a bare mpiexec
#   mpiexec       a bare mpiexec's pid
#   mpiexec-group a bare mpiexec's process group
# Each asserts the status the caller sees: 75 (stop checkpoint written)
# everywhere, except SIGINT/SIGTERM reaching a bare mpiexec, which kills
# its ranks within ~2 s and exits 1 (documented in docs/slurm.md; what
# `bloomshard launch` exists to avoid). Then the same command is run again:
# it must resume from the state dir and finish with output exactly once
# (oracle.py, gzip -t, zstd -t), and no rank of the signalled job may live on.
#
# usage: signal_exit.sh TARGET BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
TARGET=${1:-}
shift || true
source "$(dirname "$0")/lib.sh"
case $TARGET in
  launch | launch-group | ranks | mpiexec | mpiexec-group) ;;
  *) harness_usage "TARGET must be launch, launch-group, ranks, mpiexec or mpiexec-group, got '$TARGET'" ;;
esac
fault_start signal_exit_${TARGET} "$@"
if [[ $TARGET == launch ]]; then
  RC=0
  "$BIN" launch -- >"$TMP/usage.log" 2>&1 || RC=$?
  ((RC == 2)) && grep -q "no command to run" "$TMP/usage.log" ||
    fail "launch without a command: exit $RC, expected 2 and 'no command to run'"
  RC=0
  "$BIN" launch -- "$TMP/no-such-launcher" >"$TMP/usage.log" 2>&1 || RC=$?
  ((RC == 127)) && grep -q "cannot run '$TMP/no-such-launcher'" "$TMP/usage.log" ||
    fail "launch of a missing program: exit $RC, expected 127 naming it"
fi
make_corpus 150000
OUT=$TMP/out STATE=$TMP/state
# The first checkpoint comes after 400 rounds (of ~3,900) at the latest,
# whatever the clock says: a timed one alone comes only with the final
# checkpoint when the rounds finish inside --checkpoint-every (they can
# take under 0.3 s), and the signal then finds a job with nothing left but
# its finish.
ARGS=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.3
  --checkpoint-rounds 400 --batch-bytes 4096)

# Starts TAG in a session (process group) of its own, so that a group signal
# reaches only the job, never this script; sets JOB (the caller's child).
start_signalled_job() { # TAG
  local tag=$1
  ln -sf "$BIN" "$MARK/bs-$tag"
  local job=("$MPIEXEC" "$NP_FLAG" 2 --oversubscribe ${MPI_EXTRA:-} "$MARK/bs-$tag" dedup "${ARGS[@]}")
  if [[ $TARGET == launch* ]]; then
    ln -sf "$BIN" "$MARK/launch-$tag"
    job=("$MARK/launch-$tag" launch -- "${job[@]}")
  fi
  # Held after its first checkpoint until the stop request arrives: the
  # signal always finds the job running (it would otherwise finish in ~1.5 s).
  BLOOMSHARD_FAULT_PAUSE_IN_FINISH=after-first-checkpoint setsid "${job[@]}" >"$TMP/$tag.log" 2>&1 &
  JOB=$!
}

DEFAULT_SIGNALS="INT TERM USR1"
[[ $TARGET == launch ]] && DEFAULT_SIGNALS+=" KILL"
SIGNALS=${SIGNALS:-$DEFAULT_SIGNALS}
for sig in $SIGNALS; do # SIGNALS=...: a subset, when debugging
  tag=${sig,,}
  rm -rf "$OUT" "$STATE"
  start_signalled_job "$tag"
  # Held at the pause (rank 0 says so): a LATEST alone could be the final
  # checkpoint's, after which the signal finds nothing to stop.
  wait_until 120 "the first checkpoint of $tag" bash -c \
    "grep -q 'fault pause at after-first-checkpoint' $TMP/$tag.log || ! kill -0 $JOB"
  committed "$STATE" && grep -q "fault pause at after-first-checkpoint" "$TMP/$tag.log" ||
    fail "$tag: the job ended before it paused after its first checkpoint"
  mapfile -t RANKS < <(rank_pids "$tag")
  ((${#RANKS[@]} == 2)) || fail "$tag: expected 2 ranks, found ${#RANKS[@]}"
  case $TARGET in
    launch | mpiexec) kill -"$sig" "$JOB" ;;
    launch-group | mpiexec-group) kill -"$sig" -- "-$(ps -o pgid= "$JOB" | tr -d ' ')" ;;
    ranks) kill -"$sig" "${RANKS[@]}" ;;
  esac
  wait_job "$JOB" 300 "$tag"
  expected=75
  [[ $TARGET == mpiexec* && $sig != USR1 ]] && expected=1
  [[ $sig == KILL ]] && expected=137
  ((RC == expected)) || fail "SIG$sig to $TARGET: the caller saw exit $RC, expected $expected"
  # mpiexec has ended (or, after a SIGKILLed wrapper, got SIGUSR1); its
  # ranks must end too (exit, or killed by mpiexec).
  wait_until 120 "the ranks of $tag to end" bash -c \
    "! { $(declare -f alive_pid any_alive); any_alive ${RANKS[*]}; }"
  if ((expected != 1)); then
    grep -q "stop signal received; checkpointed generation written; exit 75" "$TMP/$tag.log" ||
      fail "SIG$sig to $TARGET: exit $RC without the stop checkpoint's message"
  fi
  if [[ $TARGET == launch* && $sig != KILL ]]; then
    grep -q "SIG$sig received; asking the ranks to checkpoint" "$TMP/$tag.log" ||
      fail "SIG$sig to $TARGET: the wrapper did not forward the stop request"
  fi
  log "SIG$sig to $TARGET: caller saw $RC"

  resume_args "${ARGS[@]}"
  run_job "$tag-rerun" 2 300 "${RESUME[@]}"
  ((RC == 0)) || fail "SIG$sig to $TARGET: the rerun exited $RC"
  grep -q "resuming checkpoint generation" "$TMP/$tag-rerun.log" ||
    fail "SIG$sig to $TARGET: the rerun did not resume from the state dir"
  check_outputs "$OUT"
  log "SIG$sig to $TARGET: rerun resumed, output exactly once"
done
