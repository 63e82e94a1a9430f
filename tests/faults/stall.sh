#!/usr/bin/env bash
# A rank that stops making progress (SIGSTOP: what a hung file system or a
# silent dead peer looks like to the others, which wait in a collective that
# MPI never fails): the stall watchdog (--stall-timeout 4) ends the job
# within the timeout plus ~1 s, with a message naming rank, host and what it
# was doing; the same command then resumes exactly once.
#
# usage: stall.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start stall "$@"
make_corpus 400000
OUT=$TMP/out STATE=$TMP/state
ARGS=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.3
  --batch-bytes 8192)
STALL=4

start_job s1 3 "${ARGS[@]}" --stall-timeout $STALL
wait_until 60 "the first checkpoint" committed "$STATE"
sleep 0.5
mapfile -t RANKS < <(rank_pids s1)
((${#RANKS[@]} == 3)) || fail "expected 3 ranks, found ${#RANKS[@]}"
kill -STOP "${RANKS[2]}"
T0=$(now)
wait_job "$JOB" 40 s1
T1=$(now)
((RC == 6)) || fail "a stalled job exited $RC, want 6 (the watchdog)"
grep -Eq "rank [0-9] on [^ ]+ \(pid [0-9]+\): no progress for [0-9]+ s \(--stall-timeout $STALL\) while [a-z ]+" \
  "$TMP/s1.log" || fail "no watchdog message naming rank, host and activity"
wait_until 10 "every rank of the stalled job to be gone" bash -c "! { $(declare -f alive_pid any_alive); any_alive ${RANKS[*]}; }"
detect stall "$(elapsed "$T0" "$T1")" $((STALL + 3))
log "ended $(elapsed "$T0" "$T1") s after the stall: $(grep -m1 -o 'rank [0-9] on .*watchdog)' "$TMP/s1.log")"

resume_args "${ARGS[@]}"
run_job s2 2 120 "${RESUME[@]}" --stall-timeout $STALL
((RC == 0)) || fail "the resumed job exited $RC"
grep -q "resuming checkpoint generation" "$TMP/s2.log" || fail "the restart did not resume"
check_outputs "$OUT"
log "resumed on 2 ranks, exactly once"
log "ok"
