#!/usr/bin/env bash
# Slurm scenarios of slurm/dedup.sbatch on a throw-away one-node cluster
# (harness.sh). Every scenario checks the final outputs with the exactly-once
# oracle and against the kept key set of an uninterrupted run.
#
# usage: run_scenario.sh --scenario NAME --bin BLOOMSHARD --repo REPO_DIR [--python P]
# scenarios:
#   complete      jobs/corpus-dedup.ini on 3 ranks (srun) and 2 ranks (mpirun launcher)
#   signal        scancel --signal=USR1 --batch while running: checkpoint, exit 75,
#                 requeue, resume, complete (SLURM_RESTART_COUNT=1 in the log)
#   hard          ranks SIGKILLed mid-round + scontrol requeue: resume from LATEST
#   term_all      mpirun launcher, scancel --signal=TERM --full (the batch shell
#                 and its children): whatever the launcher returns (75 after a
#                 stop checkpoint, 1 when mpirun got the TERM and killed the
#                 ranks), the script requeues on the signal it got; resume,
#                 complete
#   ranks         checkpoint on 4 ranks (no requeue: exit 75), resubmit on 2 ranks
#   chain         slurm/chain.sh: 3 chained jobs, the 1st checkpointed, the 2nd
#                 finishes, the 3rd does nothing
#   broken        a truncated .zst input with --on-input-error fail: fails once with exit 1
#                 and a message
#                 naming the file, never requeued
# Exit 77 (skip) when Slurm is not installed or, for the checkpoint
# scenarios, when the program has no --state yet. KEEP_TMP=1 keeps temp dirs.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse run_scenario.sh "--scenario=SCENARIO* --bin=BIN* --repo=REPO*" "$@"
[[ -f $REPO/slurm/dedup.sbatch ]] || harness_usage "no slurm/dedup.sbatch in --repo $REPO"
ORACLE=$REPO/tests/e2e/oracle.py
SBATCH_SCRIPT=$REPO/slurm/dedup.sbatch

# The cluster (its own temp dir and EXIT trap: docs blocks source it alone).
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

harness_label "slurm:$SCENARIO"' $(date +%T)'
# A failure shows the end of every job's output.
harness_on_fail 'harness_dump_logs "${WORK:-/nonexistent}/*.out" 40'

HAS_STATE=0
# Captured first: `--help | grep -q` under pipefail fails when grep exits
# early and the writer gets SIGPIPE (seen under load: scenarios skipped).
dedup_help=$("$BIN" dedup --help 2>/dev/null || true)
[[ $dedup_help == *--state* ]] && HAS_STATE=1
need_checkpointing() {
  ((HAS_STATE)) || slurm_loud_skip "checkpointing not built yet: '$BIN dedup --help' has no --state" \
    "(scenario '$SCENARIO' needs --state/--checkpoint-every/exit 75)"
}

# Corpus: small, JSONL.zst, several files. The checkpoint scenarios run with
# small rounds and a checkpoint every few rounds so that they last long
# enough to be interrupted (about 5-10 s on 2 cores); raise the records with
# BLOOMSHARD_SLURM_RECORDS if a fast machine finishes before the signal.
RECORDS=${BLOOMSHARD_SLURM_RECORDS:-200000}
UNIQUE=""
make_corpus() { # DIR [synth options]
  local dir=$1
  shift
  "$BIN" synth --records "$RECORDS" --dup-rate 0.3 --files 5 --compress zst --seed 42 \
    --out "$dir" --manifest "$WORK/manifest.json" "$@" >/dev/null
  UNIQUE=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["unique_keys"])' \
    "$WORK/manifest.json")
}

reference_run() { # the uninterrupted run: one process, no Slurm
  "$BIN" dedup --input "$WORK/smoke/corpus" --output "$WORK/ref" --key-field id \
    --capacity "$RECORDS" --slices 256 >"$WORK/ref.log" 2>&1 || {
    cat "$WORK/ref.log" >&2
    fail "reference run failed"
  }
}

check_outputs() { # OUTDIR: exactly once + same key set as the reference run
  "$PY" "$ORACLE" --input "$WORK/smoke/corpus" --output "$1" --key-field id \
    --expect-unique "$UNIQUE" --rejects-expected 0 --compare-keys "$WORK/ref" ||
    fail "oracle rejected $1"
}

# A job file of the repo with the keys this program does not know yet
# removed (state, checkpoint-*), so the completed-run scenarios test the
# shipped file today and unchanged once checkpointing exists.
job_file() { # NAME.ini -> path to use
  local src=$REPO/jobs/$1
  if ((HAS_STATE)); then
    echo "$src"
  else
    grep -Ev '^[[:space:]]*(state|checkpoint-[a-z]+)[[:space:]]*=' "$src" >"$WORK/$1"
    echo "$WORK/$1"
  fi
}

submit() { # LOGNAME sbatch-options... -- job-args...: prints the job id
  local name=$1
  shift
  local opts=()
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  BLOOMSHARD=$BIN sbatch --parsable -D "$WORK" -o "$WORK/$name.out" "${opts[@]}" \
    "$SBATCH_SCRIPT" "$@"
}

wait_marker() { # JOBID TIMEOUT: the first checkpoint (state/LATEST) exists while the job runs
  local id=$1 end=$((SECONDS + $2))
  while ((SECONDS < end)); do
    [[ -e $WORK/smoke/state/LATEST ]] && return 0
    case $(job_field "$id" JobState) in
      COMPLETED | FAILED | CANCELLED)
        fail "job $id ended before its first checkpoint (state/LATEST); corpus too small?" ;;
    esac
    sleep 0.1
  done
  fail "no state/LATEST after $2 s"
}

wait_requeued() { # JOBID TIMEOUT: Restarts >= 1, then start it without the cred_expire delay
  local id=$1 end=$((SECONDS + $2)) r
  while ((SECONDS < end)); do
    r=$(job_field "$id" Restarts)
    [[ ${r:-0} -ge 1 ]] && { kick_requeued "$id" 30; return 0; }
    case $(job_field "$id" JobState) in
      COMPLETED | FAILED | CANCELLED)
        fail "job $id ended ($(job_field "$id" JobState), exit $(job_field "$id" ExitCode)) without a requeue" ;;
    esac
    sleep 0.2
  done
  fail "job $id not requeued after $2 s"
}

expect_log() { # FILE REGEX WHAT
  grep -Eq -- "$2" "$1" || fail "$(basename "$1") lacks $3 (/$2/)"
}

# Checkpoint-heavy settings for the interrupted scenarios (command line wins
# over jobs/smoke.ini).
SMOKE_ARGS=(--capacity 2000000 --batch-bytes 65536 --checkpoint-rounds 4 --progress 0.5)

scenario_complete() {
  make_corpus "$WORK/smoke/corpus"
  reference_run
  local job id1 id2
  job=$(job_file corpus-dedup.ini)
  local common=(--input "$WORK/smoke/corpus" --capacity "$RECORDS" --progress 1 --batch-bytes 1048576)
  local state_srun=() state_mpirun=()
  if ((HAS_STATE)); then
    common+=(--checkpoint-every 0.5)
    state_srun=(--state "$WORK/state-srun")
    state_mpirun=(--state "$WORK/state-mpirun")
  fi
  id1=$(submit srun -n 3 --overcommit -- "$job" "${common[@]}" --output "$WORK/out-srun" \
    --metrics "$WORK/srun-metrics.json" "${state_srun[@]}")
  id2=$(BLOOMSHARD_LAUNCHER=mpirun submit mpirun -n 2 --overcommit -- "$job" "${common[@]}" \
    --output "$WORK/out-mpirun" --metrics "$WORK/mpirun-metrics.json" "${state_mpirun[@]}")
  log "submitted $id1 (srun, 3 ranks) and $id2 (mpirun, 2 ranks)"
  wait_job_state "$id1" 90 COMPLETED FAILED CANCELLED
  wait_job_state "$id2" 90 COMPLETED FAILED CANCELLED
  local id
  for id in "$id1" "$id2"; do
    [[ $(job_field "$id" JobState) == COMPLETED && $(job_field "$id" ExitCode) == 0:0 ]] ||
      fail "job $id: $(job_field "$id" JobState) exit $(job_field "$id" ExitCode)"
  done
  expect_log "$WORK/srun.out" 'tasks=3 ' "the task count"
  expect_log "$WORK/srun.out" 'SLURM_RESTART_COUNT=0' "the restart count"
  expect_log "$WORK/srun.out" 'program exited 0' "the program's exit"
  expect_log "$WORK/srun.out" '3 ranks' "the program's 3-rank summary"
  expect_log "$WORK/mpirun.out" '2 ranks' "the program's 2-rank summary"
  check_outputs "$WORK/out-srun"
  check_outputs "$WORK/out-mpirun"
  [[ -s $WORK/srun-metrics.json ]] || fail "no metrics JSON"
}

# The smoke job on 3 ranks, submitted once the reference run is done;
# returns (in SMOKE_JOB) its id once its first checkpoint is written.
start_smoke_job() {
  need_checkpointing
  make_corpus "$WORK/smoke/corpus"
  reference_run
  SMOKE_JOB=$(submit run -n 3 --overcommit -- "$REPO/jobs/smoke.ini" "${SMOKE_ARGS[@]}")
  log "submitted $SMOKE_JOB; waiting for its first checkpoint"
  wait_marker "$SMOKE_JOB" 60
}

# A requeued job JOBID must come back and complete.
expect_requeued_and_completed() {
  wait_requeued "$1" 60
  wait_job_state "$1" 120 COMPLETED FAILED CANCELLED
  [[ $(job_field "$1" JobState) == COMPLETED ]] ||
    fail "job $1: $(job_field "$1" JobState) exit $(job_field "$1" ExitCode)"
}

scenario_signal() {
  start_smoke_job
  local id=$SMOKE_JOB
  scancel --signal=USR1 --batch "$id"
  log "sent USR1 to the batch shell of $id"
  expect_requeued_and_completed "$id"
  expect_log "$WORK/run.out" 'got SIGUSR1' "the trapped signal"
  expect_log "$WORK/run.out" 'program exited 75' "the checkpoint exit"
  expect_log "$WORK/run.out" 'requeueing job' "the requeue"
  expect_log "$WORK/run.out" 'SLURM_RESTART_COUNT=1 ' "the restarted run"
  expect_log "$WORK/run.out" 'program exited 0' "the completed run"
  log "restarts: $(job_field "$id" Restarts)"
  check_outputs "$WORK/smoke/out"
}

scenario_term_all() {
  need_checkpointing
  make_corpus "$WORK/smoke/corpus"
  reference_run
  local id
  id=$(BLOOMSHARD_LAUNCHER=mpirun submit run -n 2 --overcommit -- "$REPO/jobs/smoke.ini" \
    "${SMOKE_ARGS[@]}")
  log "submitted $id (mpirun launcher); waiting for its first checkpoint"
  wait_marker "$id" 60
  scancel --signal=TERM --full "$id"
  log "sent TERM to every process of the batch step of $id"
  expect_requeued_and_completed "$id"
  expect_log "$WORK/run.out" 'got SIGTERM' "the trapped signal"
  expect_log "$WORK/run.out" 'program exited [0-9]+ .*signals: TERM' "the signalled run's exit"
  expect_log "$WORK/run.out" 'requeueing job' "the requeue"
  expect_log "$WORK/run.out" 'SLURM_RESTART_COUNT=1 ' "the restarted run"
  expect_log "$WORK/run.out" 'program exited 0' "the completed run"
  log "the signalled run: $(grep -m1 'program exited' "$WORK/run.out")"
  check_outputs "$WORK/smoke/out"
}

scenario_hard() {
  start_smoke_job
  local id=$SMOKE_JOB
  sleep 0.5 # a few rounds past the checkpoint: work that must be redone
  # Node failure / preemption without warning: the ranks die at once
  # (SIGKILL, no chance to checkpoint), then Slurm requeues the job.
  local pids=() pid
  for pid in $(scontrol listpids "$id" 2>/dev/null | awk 'NR > 1 {print $1}'); do
    # a rank: its command line names the program (works for wrappers too)
    { tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | head -n2 | grep -qxF "$BIN" && pids+=("$pid")
  done
  ((${#pids[@]} > 0)) || fail "no rank processes of job $id found"
  kill -KILL "${pids[@]}"
  scontrol requeue "$id"
  log "killed ranks ${pids[*]} and requeued $id"
  expect_requeued_and_completed "$id"
  expect_log "$WORK/run.out" 'SLURM_RESTART_COUNT=1 ' "the restarted run"
  expect_log "$WORK/run.out" 'program exited 0' "the completed run"
  if grep -q 'program exited 75' "$WORK/run.out"; then
    fail "the killed run reported a checkpoint exit: the ranks were not killed mid-round"
  fi
  check_outputs "$WORK/smoke/out"
}

scenario_ranks() {
  need_checkpointing
  make_corpus "$WORK/smoke/corpus"
  reference_run
  local id1 id2
  id1=$(BLOOMSHARD_REQUEUE=0 submit first -n 4 --overcommit -- "$REPO/jobs/smoke.ini" "${SMOKE_ARGS[@]}")
  log "submitted $id1 on 4 ranks; waiting for its first checkpoint"
  wait_marker "$id1" 60
  scancel --signal=USR1 --batch "$id1"
  wait_job_state "$id1" 60 COMPLETED FAILED CANCELLED
  [[ $(job_field "$id1" ExitCode) == 75:0 && $(job_field "$id1" Restarts) == 0 ]] ||
    fail "job $id1: $(job_field "$id1" JobState) exit $(job_field "$id1" ExitCode)," \
      "restarts $(job_field "$id1" Restarts); want exit 75, no requeue"
  expect_log "$WORK/first.out" 'not requeueing \(BLOOMSHARD_REQUEUE=0\)' "the no-requeue message"
  id2=$(submit second -n 2 --overcommit -- "$REPO/jobs/smoke.ini" "${SMOKE_ARGS[@]}")
  log "checkpointed on 4 ranks; resubmitted as $id2 on 2 ranks"
  wait_job_state "$id2" 120 COMPLETED FAILED CANCELLED
  [[ $(job_field "$id2" JobState) == COMPLETED ]] ||
    fail "job $id2: $(job_field "$id2" JobState) exit $(job_field "$id2" ExitCode)"
  expect_log "$WORK/second.out" 'tasks=2 ' "the 2-task run"
  check_outputs "$WORK/smoke/out"
}

scenario_chain() {
  need_checkpointing
  make_corpus "$WORK/smoke/corpus"
  reference_run
  local ids
  mapfile -t ids < <(cd "$WORK" && BLOOMSHARD=$BIN "$REPO/slurm/chain.sh" --runs 3 --stop "$WORK/chain.stop" \
    -n 3 --overcommit -D "$WORK" -o "$WORK/chain-%j.out" -- "$REPO/jobs/smoke.ini" "${SMOKE_ARGS[@]}")
  ((${#ids[@]} == 3)) || fail "chain.sh printed ${#ids[@]} job ids, want 3"
  log "chain ${ids[*]}; waiting for the first checkpoint"
  wait_marker "${ids[0]}" 60
  scancel --signal=USR1 --batch "${ids[0]}"
  local id
  for id in "${ids[@]}"; do wait_job_state "$id" 120 COMPLETED FAILED CANCELLED; done
  [[ $(job_field "${ids[0]}" ExitCode) == 75:0 ]] || fail "first link: exit $(job_field "${ids[0]}" ExitCode), want 75"
  [[ $(job_field "${ids[1]}" ExitCode) == 0:0 ]] || fail "second link: exit $(job_field "${ids[1]}" ExitCode), want 0"
  [[ $(job_field "${ids[2]}" ExitCode) == 0:0 ]] || fail "third link: exit $(job_field "${ids[2]}" ExitCode), want 0"
  expect_log "$WORK/chain-${ids[2]}.out" 'nothing to do' "the idle last link"
  check_outputs "$WORK/smoke/out"
}

scenario_broken() {
  make_corpus "$WORK/smoke/corpus"
  local victim
  victim=$(find "$WORK/smoke/corpus" -name '*.zst' -printf '%s %p\n' | sort -n | tail -n1 | cut -d' ' -f2)
  truncate -s $(($(stat -c %s "$victim") / 2)) "$victim"
  log "truncated $(basename "$victim")"
  local job id
  job=$(job_file corpus-dedup.ini)
  # --on-input-error fail: the failure path under Slurm (the default, skip,
  # completes the job and reports the broken file: e2e.skip covers it).
  local args=(--input "$WORK/smoke/corpus" --output "$WORK/out" --capacity "$RECORDS"
    --metrics "$WORK/metrics.json" --on-input-error fail)
  ((HAS_STATE)) && args+=(--state "$WORK/state")
  id=$(submit run -n 2 --overcommit -- "$job" "${args[@]}")
  wait_job_state "$id" 90 COMPLETED FAILED CANCELLED
  [[ $(job_field "$id" JobState) == FAILED && $(job_field "$id" ExitCode) == 1:0 ]] ||
    fail "job $id: $(job_field "$id" JobState) exit $(job_field "$id" ExitCode); want FAILED 1:0"
  expect_log "$WORK/run.out" 'program exited 1 ' "the program's exit"
  expect_log "$WORK/run.out" 'not requeueing' "the no-requeue decision"
  expect_log "$WORK/run.out" "$(basename "$victim")" "a message naming the broken file"
  sleep 3 # a requeued job would be back in PENDING by now
  [[ $(job_field "$id" JobState) == FAILED && $(job_field "$id" Restarts) == 0 ]] ||
    fail "job $id was requeued: $(job_field "$id" JobState), restarts $(job_field "$id" Restarts)"
  log "program said: $(grep -m1 -i "$(basename "$victim")" "$WORK/run.out")"
}

case $SCENARIO in
  complete | broken) ;;
  signal | hard | ranks | chain | term_all) need_checkpointing ;; # before starting a cluster for nothing
  *) harness_usage "unknown scenario '$SCENARIO'" ;;
esac
start=$SECONDS
# shellcheck disable=SC2119 # no extra slurm.conf lines
slurm_start
WORK=$SLURM_TMP/jobs
mkdir -p "$WORK/smoke"
"scenario_$SCENARIO"
log "PASS in $((SECONDS - start)) s"
