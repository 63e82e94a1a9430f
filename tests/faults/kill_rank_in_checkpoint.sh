#!/usr/bin/env bash
# SIGKILL of one rank inside a checkpoint write (its ckpt-<g>.h5.tmp
# exists): the job ends within the bound, the last committed generation is
# intact, and the same command resumes exactly once (on another rank count).
#
# usage: kill_rank_in_checkpoint.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start kill_rank_in_checkpoint "$@"
make_corpus 400000
OUT=$TMP/out STATE=$TMP/state
ARGS=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.3
  --batch-bytes 8192 --stall-timeout 20)

start_job k1 3 "${ARGS[@]}"
wait_until 60 "the first checkpoint" committed "$STATE"
read -r G0 <"$STATE/LATEST"
wait_until 30 "a checkpoint write in progress" ckpt_tmp_exists "$STATE"
mapfile -t RANKS < <(rank_pids k1)
kill -KILL "${RANKS[1]}"
T0=$(now)
wait_job "$JOB" 60 k1
T1=$(now)
((RC != 0)) || fail "the job exited 0 after a rank was killed"
wait_until 10 "every rank to be gone" bash -c "! { $(declare -f alive_pid any_alive); any_alive ${RANKS[*]}; }"
detect kill-rank-in-checkpoint "$(elapsed "$T0" "$T1")" 10
read -r G1 <"$STATE/LATEST"
((G1 >= G0)) || fail "LATEST went back from $G0 to $G1"
log "job ended $(elapsed "$T0" "$T1") s after the kill (exit $RC); LATEST $G1"

resume_args "${ARGS[@]}"
run_job k2 2 120 "${RESUME[@]}"
((RC == 0)) || fail "the resumed job exited $RC"
grep -q "resuming checkpoint generation $G1 " "$TMP/k2.log" ||
  fail "the restart did not resume from generation $G1: $(grep -m1 resum "$TMP/k2.log" || true)"
check_outputs "$OUT"
log "resumed from generation $G1 on 2 ranks, exactly once"
log "ok"
