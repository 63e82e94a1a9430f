#!/usr/bin/env bash
# SIGKILLs inside tier-2 compaction: a dedup job with --state,
# --checkpoint-rounds 1 and --compaction-fanout 2 (every other checkpoint
# merges runs, the merges cascade up to the whole history) is killed (all
# ranks, SIGKILL) at a random moment while a checkpoint that compacts is
# being written, again and again, restarted each time on 1..3 ranks; then
# it runs to the end. A kill counts only when it landed inside the
# compacting checkpoint: its run file's .tmp existed and LATEST had not yet
# moved on. After the kills the outputs must be exactly once (oracle.py)
# with the key set of an uninterrupted run, `bloomshard verify` must pass,
# and the state must hold no *.tmp.
#
# usage: compaction_torture.sh BIN ORACLE [--kills N] [--seed S] [--mpiexec M]
#                              [--np-flag -n] [--python P] [--budget SECONDS]
#   --kills  compaction kills to deliver (default 20)   --budget  kill phase limit (default 240 s)
# Which generation compacts is read from the committed generation's run
# levels (h5dump /runs/level): with fanout 2 the next one merges when the
# newest run has level 0 or the run count is at --max-runs.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
KILLS=20 SEED=1 BUDGET=240
harness_parse compaction_torture.sh "BIN ORACLE --kills=KILLS --seed=SEED --budget=BUDGET" "$@"
command -v h5dump >/dev/null || harness_usage "needs h5dump (hdf5-tools)"
harness_tmp compaction "compaction torture, seed $SEED"
harness_marker
exec {NAPFD}<> <(:)
nap() { read -r -t "$1" -u "$NAPFD" _ || true; }
RANDOM=$SEED
R=0
rnd() { R=$(((RANDOM * 32768 + RANDOM) % $1)); }

IN=$TMP/in
"$BIN" synth --out "$IN/a" --manifest "$TMP/a.json" --records 120000 --dup-rate 0.3 --files 3 \
  --seed $((SEED * 10 + 1)) >/dev/null
"$BIN" synth --out "$IN/b" --manifest "$TMP/b.json" --records 60000 --dup-rate 0.2 --files 2 \
  --compress gz --seed $((SEED * 10 + 2)) >/dev/null
UNIQUE=$("$PY" "$ORACLE" --input "$IN" --key-field id --stats |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["unique_keys"])')
MAX_RUNS=4
JOB_ARGS=(--input "$IN" --key-field id --batch-bytes 65536 --slices 256 --capacity 400000
  --checkpoint-rounds 1 --compaction-fanout 2 --max-runs $MAX_RUNS)
REF=$TMP/ref
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup --input "$IN" --key-field id \
  --batch-bytes 65536 --slices 256 --output "$REF" >"$TMP/ref.log" 2>&1 ||
  { cat "$TMP/ref.log" >&2; fail "reference run failed"; }
log "seed $SEED: $UNIQUE unique keys; $KILLS kills inside compaction wanted"

STATE=$TMP/state OUT=$TMP/out
JOB=0 MARKER="" ATT=0
start_job() { # RANKS
  ATT=$((ATT + 1))
  printf -v MARKER '%s/bs-a%04d' "$MARK" "$ATT"
  ln -s "$BIN" "$MARKER"
  timeout -s KILL 120 "$MPIEXEC" "$NP_FLAG" "$1" --oversubscribe "$MARKER" dedup "${JOB_ARGS[@]}" \
    --output "$OUT" --state "$STATE" >"$TMP/attempt-$ATT.log" 2>&1 &
  JOB=$!
}
alive() { kill -0 "$JOB" 2>/dev/null; }
latest() { local g=-1; [[ -f $STATE/LATEST ]] && read -r g <"$STATE/LATEST" 2>/dev/null; echo "${g:--1}"; }
# 0 if the generation after G merges runs (fanout 2, cap MAX_RUNS).
next_compacts() { # G
  local out data n last
  out=$(h5dump -d /runs/level -y -w 0 "$STATE/ckpt-$1.h5" 2>/dev/null) || return 1
  data=${out#*DATA \{}
  data=${data%%\}*}
  data=${data//[[:space:]]/}
  IFS=, read -r -a lv <<<"$data"
  n=${#lv[@]}
  ((n > 0)) || return 1
  last=${lv[n - 1]}
  ((last == 0 || n >= MAX_RUNS))
}

DONE_KILLS=0 LATE=0 FINISHED=0 DELAY_MS=60
T0=$SECONDS
while ((DONE_KILLS < KILLS && SECONDS - T0 < BUDGET)); do
  rnd 3
  start_job $((R + 1))
  seen=-2 armed=0
  while alive; do
    g=$(latest)
    if [[ $g != "$seen" ]]; then
      seen=$g armed=0
      if [[ $g != -1 ]] && next_compacts "$g"; then armed=1; fi
    fi
    if ((armed)) && compgen -G "$STATE/run-$((g + 1))-*.h5.tmp" >/dev/null; then
      rnd $DELAY_MS
      nap "0.$(printf '%03d' "$R")"
      kill_marker "$MARKER"
      wait "$JOB" 2>/dev/null || true
      if [[ $(latest) == "$g" ]]; then
        DONE_KILLS=$((DONE_KILLS + 1))
        echo "attempt $ATT: killed inside the compacting checkpoint $((g + 1)) after ${R} ms" >>"$TMP/kills.txt"
      else
        LATE=$((LATE + 1))
        DELAY_MS=$((DELAY_MS > 10 ? DELAY_MS * 3 / 4 : 10))
      fi
      break
    fi
    nap 0.001
  done
  if ! alive && [[ -f $OUT/_SUCCESS || $(grep -c "records," "$TMP/attempt-$ATT.log" 2>/dev/null) -gt 0 ]]; then
    # The job finished before enough kills: check it, then start over.
    wait "$JOB" 2>/dev/null || true
    if grep -q "records," "$TMP/attempt-$ATT.log"; then
      "$PY" "$ORACLE" --input "$IN" --output "$OUT" --key-field id --expect-unique "$UNIQUE" \
        --compare-keys "$REF" >/dev/null || fail "oracle rejected a finished campaign (attempt $ATT)"
      FINISHED=$((FINISHED + 1))
      rm -rf "$STATE" "$OUT"
    fi
  fi
done
log "$DONE_KILLS kills inside compaction ($LATE landed after the commit), $ATT attempts, $FINISHED campaigns finished"
((DONE_KILLS >= KILLS)) || fail "only $DONE_KILLS kills inside compaction within ${BUDGET} s"

# Resume to the end on 2 ranks.
rm -f "$MARK"/bs-final
ln -s "$BIN" "$MARK/bs-final"
timeout -s KILL 300 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$MARK/bs-final" dedup "${JOB_ARGS[@]}" \
  --output "$OUT" --state "$STATE" >"$TMP/final.log" 2>&1 || { cat "$TMP/final.log" >&2; fail "final resume failed"; }
"$PY" "$ORACLE" --input "$IN" --output "$OUT" --key-field id --expect-unique "$UNIQUE" \
  --compare-keys "$REF" >/dev/null || fail "oracle rejected the outputs after the kills"
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" verify --state "$STATE" --all >"$TMP/verify.log" 2>&1 ||
  { cat "$TMP/verify.log" >&2; fail "verify failed after the kills"; }
[[ -z $(find "$STATE" -name '*.tmp') ]] || { ls -la "$STATE" >&2; fail "stray *.tmp in the state"; }
log "resumed to the end: exactly once, same keys as the reference, verify --all ok, no *.tmp"
log PASS
