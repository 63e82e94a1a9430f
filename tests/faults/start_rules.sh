#!/usr/bin/env bash
# How a run starts after a fault ("checkpoint fallback only within
# the same run"):
#  1. an incremental run (finished history + new inputs) killed before its
#     first checkpoint starts again like a fresh run (it used to exit 4) and
#     its outputs equal those of an uninterrupted incremental run;
#  2. when the newest generation of an unfinished incremental run fails to
#     load, the start never falls back to the history's finished generation
#     (another run's state): it refuses, each skip explained in one line;
#  3. a stop signal arriving during a checkpoint makes that generation the
#     stop's checkpoint: exit 75 with no second full checkpoint.
#
# usage: start_rules.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start start_rules "$@"
make_corpus 200000 # yesterday's corpus: $IN
TODAY=$TMP/today
"$BIN" synth --out "$TODAY/new" --records 300000 --dup-rate 0.2 --files 2 --compress gz \
  --seed 21 >/dev/null
cp "$IN/zst/part-00000.jsonl.zst" "$TODAY/recrawl.jsonl.zst"

run_job hist 2 120 --input "$IN" --output "$TMP/out-hist" --key-field id --state "$TMP/hist-state"
((RC == 0)) || fail "the history run exited $RC"
today() { # OUT STATE [args]
  local out=$1 state=$2
  shift 2
  TODAY_ARGS=(--input "$TODAY" --output "$out" --key-field id --state "$state" --batch-bytes 8192 "$@")
}
decompressed() { # DIR: every output's lines, file by file
  local f
  while IFS= read -r f; do
    echo "== ${f#$1/}"
    case $f in
      *.gz) gzip -dc "$f" ;; *.zst) zstd -qdc "$f" ;; *) cat "$f" ;;
    esac
  done < <(find "$1" -type f ! -name '_*' ! -path '*/_rejects/*' | sort)
}

# --- 1. incremental, killed before its first checkpoint, restarted.
cp -a "$TMP/hist-state" "$TMP/ref-state"
today "$TMP/out-ref" "$TMP/ref-state"
run_job ref 2 120 "${TODAY_ARGS[@]}"
((RC == 0)) || fail "the reference incremental run exited $RC"
cp -a "$TMP/hist-state" "$TMP/s1"
today "$TMP/out-1" "$TMP/s1"
start_job i1 2 "${TODAY_ARGS[@]}"
wait_until 60 "incremental outputs" bash -c "[[ -n \$(find '$TMP/out-1' -name '*.gz' -size +8k 2>/dev/null) ]]"
kill -KILL "$JOB" $(rank_pids i1)
wait "$JOB" 2>/dev/null || true
grep -q " records, " "$TMP/i1.log" && fail "the incremental run finished before the kill"
[[ $(cat "$TMP/s1/LATEST") == $(cat "$TMP/hist-state/LATEST") ]] || fail "a checkpoint was written before the kill"
run_job i2 2 120 "${TODAY_ARGS[@]}"
((RC == 0)) || fail "the restarted incremental run exited $RC (4 = the old 'output dir in use')"
grep -q "incremental run on checkpoint generation" "$TMP/i2.log" || fail "the restart did not start incremental"
cmp -s <(decompressed "$TMP/out-ref") <(decompressed "$TMP/out-1") ||
  fail "the restarted incremental outputs differ from an uninterrupted run's"
log "1. incremental run killed before its first checkpoint: restarted fresh, outputs equal the reference"

# --- 2. newest generation of the incremental run corrupt: no fallback to history.
cp -a "$TMP/hist-state" "$TMP/s2"
today "$TMP/out-2" "$TMP/s2"
start_job u1 2 "${TODAY_ARGS[@]}"
wait_until 60 "incremental outputs" bash -c "[[ -n \$(find '$TMP/out-2' -name '*.gz' -size +8k 2>/dev/null) ]]"
kill -USR1 "$JOB"
wait_job "$JOB" 60 u1
((RC == 75)) || fail "SIGUSR1 gave exit $RC, want 75"
read -r G <"$TMP/s2/LATEST"
F=$TMP/s2/ckpt-$G.h5
SIZE=$(stat -c %s "$F")
# Damage data well inside the file (the header stays readable, so the start
# decides "resume" and the load's checksums fail).
dd if=/dev/urandom of="$F" bs=4096 seek=$((SIZE * 6 / 10 / 4096)) count=64 conv=notrunc status=none
run_job u2 2 120 "${TODAY_ARGS[@]}"
((RC != 0)) || fail "a run whose own generations all fail adopted another run's state (exit 0)"
grep -q "checkpoint generation $G cannot be used" "$TMP/u2.log" || fail "no line for the corrupt generation"
grep -Eq "generation [0-9]+ skipped: it holds finished run [0-9a-f]+, this start continues unfinished run" \
  "$TMP/u2.log" || fail "the history's generation was not skipped with a reason"
LINES=$(grep -c "" "$TMP/u2.log")
((LINES < 20)) || fail "the refusal took $LINES lines"
LONGEST=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$TMP/u2.log")
((LONGEST < 1000)) || fail "a line of the refusal has $LONGEST characters (a summary, not a list)"
log "2. corrupt newest generation: refused (exit $RC) in $LINES lines: $(grep -m1 -o 'generation [0-9]* skipped.*' "$TMP/u2.log" | cut -c1-120)"

# --- 3. a stop signal during a checkpoint: that generation is the stop's.
OUT3=$TMP/out-3 STATE3=$TMP/s3
ok3=0
# The run may end between two polls of a checkpoint write (a fast machine
# runs it in half a second): then that try is over and another starts.
tmp_or_ended() { ckpt_tmp_exists "$1" || ! kill -0 "$JOB" 2>/dev/null; }
committed_or_ended() { committed "$1" || ! kill -0 "$JOB" 2>/dev/null; }
for try in 1 2 3 4 5 6 7 8; do
  rm -rf "$OUT3" "$STATE3"
  # Small rounds keep the run going long enough for a mid-run checkpoint.
  start_job p$try 2 --input "$IN" --output "$OUT3" --key-field id --state "$STATE3" \
    --checkpoint-every 0.1 --batch-bytes 4096
  wait_until 60 "a committed generation" committed_or_ended "$STATE3"
  wait_until 60 "a checkpoint write in progress" tmp_or_ended "$STATE3"
  T=$(compgen -G "$STATE3/ckpt-*.h5.tmp" | head -n1 || true)
  if [[ -z $T ]]; then
    wait_job "$JOB" 60 p$try
    log "try $try: the run ended before a checkpoint write was seen; again"
    continue
  fi
  kill -USR1 "$JOB"
  G=${T##*/ckpt-}
  G=${G%.h5.tmp}
  wait_job "$JOB" 60 p$try
  if ((RC == 0)) && grep -q " records, " "$TMP/p$try.log"; then
    log "try $try: the run finished before the signal landed (final checkpoint); again"
    continue
  fi
  ((RC == 75)) || fail "SIGUSR1 during a checkpoint gave exit $RC, want 75"
  read -r L <"$STATE3/LATEST"
  if grep -q "stop signal arrived during checkpoint generation $G:" "$TMP/p$try.log"; then
    ((L == G)) || fail "the stop's checkpoint was generation $G but LATEST is $L (a second checkpoint)"
    ok3=1
    break
  fi
  log "try $try: the signal reached the ranks after generation $G was done (LATEST $L); again"
done
((ok3)) || fail "in 8 tries the signal never landed inside a checkpoint"
run_job p-end 2 120 --input "$IN" --output "$OUT3" --key-field id --state "$STATE3" --batch-bytes 8192
((RC == 0)) || fail "the resume after the stop exited $RC"
check_outputs "$OUT3"
log "3. stop during generation $G: exit 75, LATEST $G, no second checkpoint; resumed exactly once"
log "ok"
