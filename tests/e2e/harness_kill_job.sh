#!/usr/bin/env bash
# The harness's kill steps kill: a job held at a fault pause on 3 ranks and
# SIGKILLed by killed_at_fault_pause (kill_job) leaves no process of it
# behind, and its state is untouched afterwards (no rank writes on). Then a
# job SIGKILLed mid-run by kill_job right after a commit: no process left,
# and the state resumes to the oracle's output. The kill tortures rest on
# this: a rank that outlived its kill would race the next attempt's files.
#
# usage: harness_kill_job.sh BLOOMSHARD E2E_DIR [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse harness_kill_job.sh "BIN EDIR" "$@"
EDIR=$(readlink -f "$EDIR")
harness_tmp harness-kill-job "harness kill_job"
harness_marker
cd "$TMP"
"$PY" "$EDIR/input_order_corpus.py" make in --files 4 --records 3000 --big-records 0 --seed 3
ARGS=(dedup --input "$TMP/in" --key-field id --batch-bytes 8192 --progress 0 --output "$TMP/out"
  --state "$TMP/st" --checkpoint-rounds 1)

# Paused ranks write nothing, so nothing (no broken pipe) ends them but the
# kill itself.
killed_at_fault_pause paused.log 3 after-first-checkpoint "${ARGS[@]}"
left=$(pgrep -af -- "$MARK/bs-pause-" || true)
[[ -z $left ]] || fail "processes of the killed job are alive: $left"
before=$(cd st && ls -l --time-style=+%s.%N)
sleep 2
[[ $(cd st && ls -l --time-style=+%s.%N) == "$before" ]] || fail "the state changed after the kill"
log "held at a fault pause on 3 ranks, killed: no process left, the state untouched"

ln -s "$BIN" "$MARK/bs-running"
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$MARK/bs-running" "${ARGS[@]}" >running.log 2>&1 &
job=$!
after_a_commit st "$(latest_generation st)" "$job"
kill -0 "$job" 2>/dev/null || fail "the job ended before the kill: $(cat running.log)"
kill_job "$MARK/bs-running" "$job"
left=$(pgrep -af -- "$MARK/bs-running" || true)
[[ -z $left ]] || fail "processes of the killed job are alive: $left"
mpi 4 "${ARGS[@]}" >resume.log 2>&1 || fail "the resume failed: $(cat resume.log)"
"$PY" "$EDIR/input_order_corpus.py" check in out || fail "not the first copies in input order"
log "killed mid-run on 2 ranks: no process left; resumed on 4 ranks to the oracle's output"
log PASS
