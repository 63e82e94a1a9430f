#!/usr/bin/env bash
# Kill only mpirun, restart at once. Open MPI leaves the
# ranks running as orphans; they must end themselves (watchdog: launcher
# gone) and the restart must wait for them (fencing), then resume exactly
# once with valid gz/zst streams. Second part: an earlier attempt that
# lives on keeps the run locked: a restart with a short --lock-wait is
# refused with exit 5 naming the holder; once it ends, the same command
# resumes.
#
# usage: orphans_restart.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start orphans_restart "$@"
make_corpus 400000
OUT=$TMP/out STATE=$TMP/state
BASE=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.3)
ARGS=("${BASE[@]}" --batch-bytes 8192)

# --- part 1: mpirun SIGKILLed mid-run, restart at once.
start_job a1 2 "${ARGS[@]}"
wait_until 60 "the first checkpoint" committed "$STATE"
sleep 0.3
mapfile -t RANKS < <(rank_pids a1)
((${#RANKS[@]} == 2)) || fail "expected 2 ranks of attempt 1, found ${#RANKS[@]}"
kill -KILL "$JOB"
T0=$(now)
wait "$JOB" 2>/dev/null || true
ORPHANS_AT_RESTART=0
any_alive "${RANKS[@]}" && ORPHANS_AT_RESTART=1
resume_args "${ARGS[@]}"
start_job a2 2 "${RESUME[@]}"
RESTART=$JOB
wait_until 10 "the orphans of attempt 1 to end" bash -c "! { $(declare -f alive_pid any_alive); any_alive ${RANKS[*]}; }"
T1=$(now)
detect orphans-end "$(elapsed "$T0" "$T1")" 3
wait_job "$RESTART" 120 a2
((RC == 0)) || fail "the restart exited $RC"
grep -q "resuming checkpoint generation" "$TMP/a2.log" || fail "the restart did not resume"
if grep -q "waiting up to" "$TMP/a2.log"; then
  log "part 1: the restart waited for the orphans (fenced)"
elif ((ORPHANS_AT_RESTART)); then
  log "part 1: orphans were alive at the restart but gone before it took the lock"
fi
check_outputs "$OUT"
log "part 1: orphans ended $(elapsed "$T0" "$T1") s after mpirun died; restart resumed, exactly once"

# --- part 2: an earlier attempt that lives on (a singleton run whose shell
# is gone, as with nohup: no launcher, so it rightly does not end itself)
# holds the run; a restart waits --lock-wait, then refuses with exit 5
# naming host, pid and since. (A SIGSTOPped orphan cannot stand in here: when
# mpirun dies, the kernel sends SIGHUP + SIGCONT to an orphaned process group
# with a stopped member, and the rank dies of the SIGHUP.)
rm -rf "$OUT" "$STATE"
ln -sf "$BIN" "$MARK/bs-b1"
# Small rounds and a checkpoint every 5 of them keep it busy for a while
# (neither is part of the run's identity).
setsid "$MARK/bs-b1" dedup "${BASE[@]}" --batch-bytes 4096 --checkpoint-rounds 5 \
  >"$TMP/b1.log" 2>&1 </dev/null &
SINGLETON=$!
wait_until 60 "the first checkpoint" committed "$STATE"
T0=$(now)
run_job b2 2 30 "${ARGS[@]}" --lock-wait 2
T1=$(now)
((RC == 5)) || fail "a restart beside a live earlier attempt exited $RC, want 5 (run locked)"
grep -q "waiting up to 2 s" "$TMP/b2.log" || fail "no wait message"
grep -Eq "host [^,]+, pid $SINGLETON, since 20[0-9-]+ [0-9:]+ UTC" "$TMP/b2.log" ||
  fail "the refusal does not name host, pid $SINGLETON and since"
alive_pid "$SINGLETON" || fail "the earlier attempt died"
log "part 2: refused after $(elapsed "$T0" "$T1") s: $(grep -m1 -o 'still holds.*(epoch [0-9]*)' "$TMP/b2.log")"
# Its owner stops it the documented way (SIGTERM: checkpoint, exit 75);
# the same restart then resumes on 3 ranks.
kill -TERM "$SINGLETON"
wait_job "$SINGLETON" 60 b1
((RC == 75)) || fail "the earlier attempt exited $RC on SIGTERM, want 75"
run_job b3 3 120 "${RESUME[@]}"
((RC == 0)) || fail "the restart after the earlier attempt ended exited $RC"
grep -q "resuming checkpoint generation" "$TMP/b3.log" || fail "the restart did not resume"
check_outputs "$OUT"
log "part 2: after the holder ended, the restart on 3 ranks resumed, exactly once"
log "ok"
