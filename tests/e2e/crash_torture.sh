#!/usr/bin/env bash
# Crash torture of checkpoint/resume: one dedup job with --state is SIGKILLed
# again and again at random moments (all ranks, one rank, inside a checkpoint
# write, right after a generation's rename; now and then a graceful SIGUSR1),
# restarted each time on a pseudo-random rank count (1..4), and finally let
# run to the end. Its outputs must then be exactly once (oracle.py), keep the
# same key set as one uninterrupted run, hold every reject exactly once, and
# the state dir must hold no stray *.tmp and at most K = 2 generations.
#
# usage: crash_torture.sh BIN ORACLE [--kills N] [--seed S] [--mpiexec M]
#                         [--np-flag -n] [--python P] [--max-ranks 4]
#                         [--budget SECONDS] [--no-state]
#   --kills   SIGKILLs to deliver (default $BLOOMSHARD_TORTURE_KILLS, else 20)
#   --seed    PRNG seed of corpus, delays, kinds and rank counts (default
#             $BLOOMSHARD_TORTURE_SEED, else 1); printed, so a failure replays
#   --budget  wall seconds for the kill phase (default 300); past it the job
#             is let finish with the kills delivered so far
#   --no-state  mechanics self-test for a binary without checkpointing: every
#             attempt starts from scratch (--overwrite); only the final run
#             is checked
# When a job finishes before all kills are delivered (the corpus is small so
# that CI stays short), it is checked and a new campaign starts on fresh
# outputs and state. Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
KILLS=${BLOOMSHARD_TORTURE_KILLS:-20} SEED=${BLOOMSHARD_TORTURE_SEED:-1}
MAX_RANKS=4 BUDGET=300 USE_STATE=1
harness_parse crash_torture.sh "BIN ORACLE --kills=KILLS --seed=SEED --max-ranks=MAX_RANKS
  --budget=BUDGET --no-state=NO_STATE!" "$@"
((NO_STATE == 0)) || USE_STATE=0
[[ -f $ORACLE ]] || harness_usage "no oracle at $ORACLE"
[[ $KILLS =~ ^[0-9]+$ && $SEED =~ ^[0-9]+$ && $MAX_RANKS =~ ^[1-9][0-9]*$ ]] ||
  harness_usage "--kills, --seed and --max-ranks take integers"

ATTEMPT_TIMEOUT=120 # seconds one job may run before timeout(1) SIGKILLs it
harness_tmp torture "torture, seed $SEED"
harness_marker # every job runs BIN through a symlink here: its marker
harness_on_fail '[[ ! -f $TMP/attempts.txt ]] || tail -n 12 "$TMP/attempts.txt" >&2'

# Fork-free sleeping and clock: polls below run every millisecond.
exec {NAPFD}<> <(:)
nap() { read -r -t "$1" -u "$NAPFD" _ || true; }
NOW_US=0
tick() { NOW_US=${EPOCHREALTIME/./}; }

RANDOM=$SEED
R=0
rnd() { R=$(((RANDOM * 32768 + RANDOM) % $1)); } # R in [0, N), no subshell

# --- corpus: plain, gz, zst; a zst copy of a plain file (cross-file and
# cross-compression duplicates); a file with bad lines spread through it.
IN=$TMP/in META=$TMP/meta
mkdir -p "$IN" "$META"
synth() { # NAME options...
  local name=$1
  shift
  "$BIN" synth --out "$IN/$name" --manifest "$META/$name.json" "$@" >/dev/null
}
synth plain --records 55000 --dup-rate 0.3 --files 4 --compress none --seed $((SEED * 10 + 1))
synth gz --records 45000 --dup-rate 0.25 --files 3 --compress gz --seed $((SEED * 10 + 2))
synth zst --records 40000 --dup-rate 0.4 --files 3 --compress zst --seed $((SEED * 10 + 3))
mkdir -p "$IN/mixed"
zstd -q -c "$IN/plain/part-00001.jsonl" >"$IN/mixed/copy-of-plain-1.jsonl.zst"
NBAD=$("$PY" - "$IN/gz/part-00000.jsonl.gz" "$IN/mixed/with-bad-lines.jsonl" <<'EOF'
import gzip, sys
src, dst = sys.argv[1:]
bad = [b'{"id": "unterminated', b'not json', b'{"no_id": 1}', b'{"id": null}', b'[1, 2]']
n = 0
with gzip.open(src, "rb") as f, open(dst, "wb") as out:
    for i, line in enumerate(f):
        if i % 397 == 11:
            out.write(bad[n % len(bad)] + b"\n")
            n += 1
        out.write(line)
        if i % 1000 == 999:  # fresh keys between the duplicates of the gz file
            out.write(b'{"id": "with-bad-lines-%d", "text": "fresh"}\n' % i)
print(n)
EOF
)
read -r RECORDS UNIQUE < <("$PY" "$ORACLE" --input "$IN" --key-field id --stats |
  "$PY" -c 'import json,sys; s=json.load(sys.stdin); print(s["records"], s["unique_keys"])')
log "seed $SEED: corpus of $RECORDS records, $UNIQUE unique keys, $NBAD bad lines; $KILLS kills"

# Job arguments besides --output/--state: small batches (many rounds), a small
# first layer (the filter grows while being killed), few slices.
JOB_ARGS=(--input "$IN" --key-field id --batch-bytes 32768 --capacity 30000 --slices 256)

# --- reference: one uninterrupted run without state.
REF=$TMP/ref
REF_START=$SECONDS
timeout -s KILL $ATTEMPT_TIMEOUT "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup \
  "${JOB_ARGS[@]}" --output "$REF" >"$TMP/ref.log" 2>&1 || {
  cat "$TMP/ref.log" >&2
  fail "the reference run failed"
}
"$PY" "$ORACLE" --input "$IN" --output "$REF" --key-field id --expect-unique "$UNIQUE" \
  --rejects-expected "$NBAD" >/dev/null || fail "oracle rejected the reference run's outputs"
log "reference run on 2 ranks: $((SECONDS - REF_START)) s, oracle ok"

# --- state of the torture
declare -A COUNT=() # kind -> times
RANKS_USED=()
CAMP=0 ATT=0 KILLED=0 ORPHANS=0 RACE_HITS=0 TMP_HITS=0 RENAME_TRIES=0
OUT="" STATE="" METRICS="" CKPT_EVERY="" EXTRA_ARGS=()
JOB=0 MARKER="" LOG="" RC=0 STARTREF=""
bump() { COUNT[$1]=$((${COUNT[$1]:-0} + 1)); }

new_campaign() {
  CAMP=$((CAMP + 1))
  OUT=$TMP/out-$CAMP STATE=$TMP/state-$CAMP METRICS=$TMP/metrics-$CAMP.json
  rnd 201
  printf -v CKPT_EVERY '0.%03d' $((100 + R))
  EXTRA_ARGS=()
  if [[ $USE_STATE == 1 ]]; then
    EXTRA_ARGS=(--state "$STATE" --checkpoint-every "$CKPT_EVERY")
    # Every other campaign a 1 MiB delta budget forces extra checkpoints.
    ((CAMP % 2 == 0)) && EXTRA_ARGS+=(--max-delta-bytes 1048576)
  else
    EXTRA_ARGS=(--overwrite)
  fi
  log "campaign $CAMP: ${EXTRA_ARGS[*]}"
}

# Newest generation file in STATE (no .tmp), or -1.
NEWEST=-1
newest_gen() {
  local f g
  NEWEST=-1
  for f in "$STATE"/ckpt-*.h5; do
    [[ -e $f ]] || continue
    g=${f##*/ckpt-}
    g=${g%.h5}
    [[ $g =~ ^[0-9]+$ ]] && ((10#$g > NEWEST)) && NEWEST=$((10#$g))
  done
  return 0
}
LATEST_G=-1
read_latest() {
  LATEST_G=-1
  local v=""
  [[ -f $STATE/LATEST ]] && { read -r v <"$STATE/LATEST" || true; }
  [[ $v =~ ^[0-9]+$ ]] && LATEST_G=$((10#$v))
  return 0
}
# A checkpoint temp file written by THIS attempt (stale ones of a killed
# attempt are older than STARTREF) into FOUND.
FOUND=""
fresh_tmp() {
  local f
  FOUND=""
  for f in "$STATE"/ckpt-*.h5.tmp; do
    [[ -e $f && $f -nt $STARTREF ]] && { FOUND=$f; return 0; }
  done
  return 1
}
fresh_gen() {
  local f
  for f in "$STATE"/ckpt-*.h5; do [[ -e $f && $f -nt $STARTREF ]] && return 0; done
  return 1
}
alive() { kill -0 "$JOB" 2>/dev/null; }

start_attempt() { # RANKS
  ATT=$((ATT + 1))
  printf -v MARKER '%s/bs-c%02d-a%04d' "$MARK" "$CAMP" "$ATT"
  ln -s "$BIN" "$MARKER"
  LOG=$TMP/attempt-$ATT.log STARTREF=$TMP/attempt-$ATT.start
  : >"$STARTREF"
  nap 0.01 # tmp files of this attempt must be strictly newer than STARTREF
  RANKS_USED+=("$1")
  timeout -s KILL $ATTEMPT_TIMEOUT "$MPIEXEC" "$NP_FLAG" "$1" --oversubscribe "$MARKER" dedup \
    "${JOB_ARGS[@]}" --output "$OUT" --metrics "$METRICS" "${EXTRA_ARGS[@]}" >"$LOG" 2>&1 &
  JOB=$!
}

# Ranks of the current job: the children of mpiexec (timeout's child).
RANK_PIDS=() MPI_PID=""
find_ranks() {
  MPI_PID=$(pgrep -P "$JOB" | head -n1 || true)
  RANK_PIDS=()
  [[ -n $MPI_PID ]] || return 0
  mapfile -t RANK_PIDS < <(pgrep -P "$MPI_PID" -f -- "$MARKER" || true)
}

# Waits at most LIMIT s for the job, then kills everything under its marker;
# sets RC. Then makes sure no rank of it survives (Open MPI tears a job down
# a moment after mpiexec exits): orphans would write into the next attempt.
finish_attempt() { # LIMIT
  local deadline
  tick
  deadline=$((NOW_US + $1 * 1000000))
  while alive; do
    tick
    ((NOW_US < deadline)) || {
      log "attempt $ATT: no exit after $1 s, killing it"
      kill_marker "$MARKER"
      break
    }
    nap 0.02
  done
  RC=0
  wait "$JOB" 2>/dev/null || RC=$? # no "Killed" job notice
  local i
  for ((i = 0; i < 250; i++)); do
    pgrep -f -- "$MARKER" >/dev/null || return 0
    nap 0.02
  done
  ORPHANS=$((ORPHANS + 1))
  kill_marker "$MARKER"
  nap 0.2
}

# SIGKILL now: "all" ranks (with mpiexec now and then: a lost node), or "one";
# counted under KIND.
SENT=0
# With PREFOUND=1 the ranks found before are taken (no pgrep fork: for the
# short windows around a rename).
PREFOUND=0
kill_now() { # all|one KIND
  SENT=1
  [[ $PREFOUND == 1 ]] || find_ranks
  PREFOUND=0
  if [[ ${#RANK_PIDS[@]} -eq 0 ]]; then
    # Still launching: mpiexec itself goes.
    bump early
    [[ -z $MPI_PID ]] || kill -KILL "$MPI_PID" 2>/dev/null || true
    return 0
  fi
  if [[ $1 == one ]]; then
    rnd ${#RANK_PIDS[@]}
    kill -KILL "${RANK_PIDS[$R]}" 2>/dev/null || true
  else
    local victims=("${RANK_PIDS[@]}")
    rnd 3
    ((R == 0)) && victims+=("$MPI_PID")
    kill -KILL "${victims[@]}" 2>/dev/null || true
  fi
  bump "$2"
}

# One interrupted attempt of kind all|one|tmp|rename|usr1. Returns 0 while
# the job is still unfinished, 1 when it finished (exit 0) before the kill.
interrupt_attempt() { # KIND
  local kind=$1 ranks ms deadline
  SENT=0 FOUND=""
  rnd "$MAX_RANKS"
  ranks=$((R + 1))
  start_attempt "$ranks"
  tick
  # Checkpoint-aimed kinds wait at most 5 s for a checkpoint (a run starts in
  # ~0.5 s and checkpoints every 0.1-0.3 s), then kill anyway.
  deadline=$((NOW_US + 5000000))
  case $kind in
    all | one)
      rnd 1951
      ms=$((50 + R)) # 0.05 .. 2 s
      tick
      deadline=$((NOW_US + ms * 1000))
      while alive && ((NOW_US < deadline)); do
        nap 0.01
        tick
      done
      alive && kill_now "$kind" "$kind"
      ;;
    tmp) # inside the write: as soon as this attempt's ckpt-<g>.h5.tmp exists
      rnd 4
      ms=$R
      while alive && ! fresh_tmp && ((NOW_US < deadline)); do
        nap 0.001
        tick
      done
      if alive; then
        if [[ -n $FOUND ]]; then
          ((ms > 0)) && nap "0.00$ms"
          TMP_HITS=$((TMP_HITS + 1))
          if ((TMP_HITS % 2 == 1)); then kill_now all tmp-all; else kill_now one tmp-one; fi
        else
          kill_now all all
        fi
      fi
      ;;
    rename) # between the generation's rename and LATEST's replacement
      while alive && ! fresh_tmp && ((NOW_US < deadline)); do
        nap 0.001
        tick
      done
      if [[ -n $FOUND ]]; then
        find_ranks
        ((${#RANK_PIDS[@]} > 0)) && PREFOUND=1
        RENAME_TRIES=$((RENAME_TRIES + 1))
        if ((RENAME_TRIES % 2 == 1)); then
          # As soon as the temp file is gone (renamed). Busy: the window is short.
          while alive && [[ -e $FOUND ]] && ((NOW_US < deadline)); do tick; done
        else
          # As soon as LATEST.tmp appears: the new file is renamed, LATEST not.
          while alive && ! [[ -e $STATE/LATEST.tmp && $STATE/LATEST.tmp -nt $STARTREF ]] &&
            ((NOW_US < deadline)); do tick; done
        fi
        alive && kill_now all rename
        PREFOUND=0
      else
        alive && kill_now all all
      fi
      ;;
    usr1) # graceful: once this attempt wrote a generation (handlers are in)
      while alive && ! fresh_gen && ((NOW_US < deadline)); do
        nap 0.005
        tick
      done
      if alive; then
        kill -USR1 "$(pgrep -P "$JOB" | head -n1 || true)" 2>/dev/null || true
        bump usr1
      fi
      ;;
  esac
  finish_attempt 30
  echo "attempt $ATT: campaign $CAMP, $ranks ranks, $kind, kill sent $SENT, exit $RC" >>"$TMP/attempts.txt"
  # Seen once in ~200 attempts: mpiexec reported 0 for an attempt whose
  # ranks our SIGKILL stopped between LATEST and pruning (no summary line,
  # no metrics). A killed attempt is an interrupted one, whatever mpiexec said.
  if [[ $RC == 0 && $SENT == 1 ]] && ! grep -q '^bloomshard dedup: .* records' "$LOG"; then
    log "attempt $ATT: exit 0 reported after our SIGKILL without a summary: counted as killed"
    RC=137
  fi
  case $RC in
    0)
      return 1
      ;;
    75)
      [[ $kind == usr1 ]] || { cat "$LOG" >&2; fail "attempt $ATT exited 75 unasked"; }
      ;;
    *)
      if [[ $kind == usr1 ]]; then
        cat "$LOG" >&2
        fail "attempt $ATT ($ranks ranks): SIGUSR1 gave exit $RC, want 75 (checkpointed)"
      fi
      # A job that failed before our kill failed of its own accord.
      if [[ $SENT == 0 ]]; then
        cat "$LOG" >&2
        fail "attempt $ATT ($ranks ranks, kind $kind) exited $RC before any SIGKILL of ours"
      fi
      KILLED=$((KILLED + 1))
      if [[ $kind == rename ]]; then
        newest_gen
        read_latest
        ((NEWEST > LATEST_G)) && RACE_HITS=$((RACE_HITS + 1))
      fi
      ;;
  esac
  return 0
}

# Lets the campaign's job finish: until exit 0, at most 4 attempts.
run_to_end() {
  local n ranks
  for ((n = 0; n < 4; n++)); do
    rnd "$MAX_RANKS"
    ranks=$((R + 1))
    start_attempt "$ranks"
    finish_attempt $ATTEMPT_TIMEOUT
    echo "attempt $ATT: campaign $CAMP, $ranks ranks, to the end, exit $RC" >>"$TMP/attempts.txt"
    [[ $RC == 0 ]] && return 0
    cat "$LOG" >&2
    [[ $RC == 75 ]] || fail "campaign $CAMP: uninterrupted attempt $ATT ($ranks ranks) exited $RC"
  done
  fail "campaign $CAMP: the job did not finish in 4 uninterrupted attempts"
}

tree_sum() { # data outputs and reject files of OUT, not the run's own records
  (cd "$OUT" && find . -type f ! -name '_bloomshard_run*' -print0 | sort -z |
    xargs -0 -r sha1sum) | sha1sum
}

check_campaign() {
  log "campaign $CAMP: finished after $ATT attempts so far; checking"
  cp "$METRICS" "$METRICS.final" 2>/dev/null || true
  # A kill that lands after the finishing generation but before the metrics
  # write leaves a finished state and no metrics; the next start says
  # "already finished" and writes them from the state
  # (finished_by_earlier_attempt), so a finished campaign always has them
  # (checked with the totals below).
  [[ -z $(pgrep -f -- "$MARK/bs-c$(printf %02d "$CAMP")" || true) ]] ||
    fail "processes of campaign $CAMP are still running"
  if [[ $USE_STATE == 1 ]]; then
    local stray
    stray=$(find "$STATE" "$OUT" -name '*.tmp')
    [[ -z $stray ]] || fail "stray temp files after the finished run: $stray"
    local gens=()
    mapfile -t gens < <(find "$STATE" -maxdepth 1 -name 'ckpt-*.h5' -printf '%f\n' | sort -V)
    newest_gen
    read_latest
    ((${#gens[@]} >= 1 && ${#gens[@]} <= 2)) ||
      fail "state dir holds ${#gens[@]} generations (${gens[*]}), want 1..2 (K = 2)"
    ((LATEST_G == NEWEST)) || fail "LATEST says $LATEST_G, newest generation file is $NEWEST"
    ((NEWEST < 2 || ${#gens[@]} == 2)) ||
      fail "generation $NEWEST reached but ${#gens[@]} kept (want K = 2)"
    log "state: generations ${gens[*]}, LATEST $LATEST_G, no *.tmp"

    # Started again with the same arguments: already finished, exit 0, no change.
    local before after
    before=$(tree_sum)
    rnd "$MAX_RANKS"
    start_attempt $((R + 1))
    finish_attempt 60
    [[ $RC == 0 ]] || { cat "$LOG" >&2; fail "a start after the finish exited $RC, want 0"; }
    grep -qi 'finish' "$LOG" || { cat "$LOG" >&2; fail "a start after the finish does not say it is finished"; }
    after=$(tree_sum)
    [[ $before == "$after" ]] || fail "a start after the finish changed the outputs"
    [[ -z $(find "$STATE" -name '*.tmp') ]] || fail "a start after the finish left *.tmp files"

    if "$BIN" verify --help >/dev/null 2>&1; then
      "$BIN" verify --state "$STATE" >"$TMP/verify.log" 2>&1 ||
        { cat "$TMP/verify.log" >&2; fail "bloomshard verify --state rejects the final state"; }
    else
      log "bloomshard verify not available: skipped"
    fi
  fi
  "$PY" "$ORACLE" --input "$IN" --output "$OUT" --key-field id --expect-unique "$UNIQUE" \
    --rejects-expected "$NBAD" --compare-keys "$REF" ||
    fail "campaign $CAMP: oracle rejected the outputs (see above)"
  [[ -f $METRICS.final ]] || fail "no metrics written by the finishing run"
  # Counters are job totals, summed over every resumed segment.
  "$PY" - "$METRICS.final" "$RECORDS" "$UNIQUE" "$NBAD" <<'EOF' || fail "metrics are not the job's totals"
import json, sys
m = json.load(open(sys.argv[1]))
records, unique, bad = map(int, sys.argv[2:])
want = {"records": records, "kept": unique, "rejected": bad, "duplicates": records - unique - bad}
got = {k: m.get(k) for k in want}
if got != want:
    print(f"metrics {got}, want {want}", file=sys.stderr)
    sys.exit(1)
EOF
}

# --- the torture loop
PHASE_START=$SECONDS
MAX_ATTEMPTS=$((4 * KILLS + 20))
new_campaign
LAST_FINISHED=0
while ((KILLED < KILLS)); do
  ((ATT < MAX_ATTEMPTS)) || fail "$ATT attempts for $KILLED kills: the job makes no progress"
  if ((SECONDS - PHASE_START > BUDGET)); then
    log "kill phase budget of $BUDGET s used up after $KILLED kills"
    break
  fi
  # Checkpoint-aimed kinds need checkpoints; after one that saw the job end
  # the next kill is a plain one, so a kill count is never retried forever.
  if ((KILLED % 5 == 2)) && [[ $USE_STATE == 1 && $LAST_FINISHED == 0 ]]; then
    KIND=tmp
  elif ((KILLED % 5 == 4)) && [[ $USE_STATE == 1 && $LAST_FINISHED == 0 ]]; then
    KIND=rename
  else
    rnd 10
    if ((R == 0)) && [[ $USE_STATE == 1 ]]; then KIND=usr1; elif ((R <= 5)); then KIND=all; else KIND=one; fi
  fi
  LAST_FINISHED=0
  if ! interrupt_attempt "$KIND"; then
    LAST_FINISHED=1
    check_campaign
    new_campaign
  fi
done
run_to_end
check_campaign

summary=""
for k in all one early tmp-all tmp-one rename usr1; do summary+=" $k=${COUNT[$k]:-0}"; done
declare -A per_ranks=()
for r in "${RANKS_USED[@]}"; do per_ranks[$r]=$((${per_ranks[$r]:-0} + 1)); done
ranks_summary=""
for r in $(printf '%s\n' "${!per_ranks[@]}" | sort -n); do ranks_summary+=" ${r}r=${per_ranks[$r]}"; done
changes=0
for ((i = 1; i < ${#RANKS_USED[@]}; i++)); do
  [[ ${RANKS_USED[$i]} != "${RANKS_USED[$((i - 1))]}" ]] && changes=$((changes + 1))
done
log "summary: $KILLED kills ($summary ), rename races that hit the window (newer file than LATEST): $RACE_HITS, kills inside a write: $TMP_HITS"
log "summary: $ATT attempts in $CAMP campaign(s), rank counts used:$ranks_summary, rank count changed $changes times, orphans reaped $ORPHANS"
log "PASS in $SECONDS s"
