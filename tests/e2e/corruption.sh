#!/usr/bin/env bash
# Corrupted checkpoints: an interrupted dedup run with --state (two
# generations, exit 75 on SIGUSR1) is copied, its newest generation damaged
# in one way per case, and the program's reaction checked:
#   flipped byte in /bloom/layer_0 (generation file), /tier2/fingerprints,
#   /tier2/offsets, /tier2/bytes (the newest run file, format 2); the newest
#   run file missing; the newest file truncated; a future format_version
#     -> resume falls back to the older generation with a warning naming the
#        problem, and the finished outputs are exactly once (oracle.py) with
#        the key set of an uninterrupted run; `verify` fails naming it
#   LATEST naming a generation that does not exist
#     -> resume from the newest existing generation
#   every generation damaged, every generation of a future format
#     -> exit 1 with a clear message; no signal, no core dump
#   a foreign hash scheme in the newest generation
#     -> refused naming the scheme
# `bloomshard verify --state` (exit 0 only when all verifies) and `bloomshard
# info --state [--json]` are checked along the way.
#
# usage: corruption.sh BIN ORACLE CKPT_PATCH [--mpiexec M] [--np-flag -n] [--python P]
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse corruption.sh "BIN ORACLE PATCH" "$@"
[[ -f $ORACLE && -x $PATCH ]] || harness_usage "need an ORACLE file and an executable CKPT_PATCH"
command -v h5ls >/dev/null || harness_usage "h5ls (hdf5-tools) is needed"

CASE=setup
harness_tmp corruption 'corruption, $CASE'
JOB=0
harness_on_exit '((JOB == 0)) || kill -KILL "$JOB" 2>/dev/null'
harness_marker # every job runs BIN as MARKED_BIN; the cleanup kills what is left
MARKED_BIN=$MARK/bloomshard-corruption
ln -s "$(readlink -f "$BIN")" "$MARKED_BIN"
cd "$TMP" # a core dump would land here

IN=$TMP/in OUT=$TMP/out STATE=$TMP/state REF=$TMP/ref
mkdir -p "$IN" "$TMP/meta"
synth() { # NAME options...
  local name=$1
  shift
  "$BIN" synth --out "$IN/$name" --manifest "$TMP/meta/$name.json" "$@" >/dev/null
}
# ~27k records (~4.7 MB): ~145 rounds of 16 KiB a rank on 2 ranks, so the
# two generations (rounds 20 and 40) come early and SIGUSR1 lands with ~100
# rounds to go. Each of the 9 runs to the end below goes through every
# round: at 80k records (until 2026-12-02) they were 2/3 of the test's time.
synth plain --records 10000 --dup-rate 0.3 --files 3 --compress none --seed 41
synth gz --records 8500 --dup-rate 0.25 --files 2 --compress gz --seed 42
synth zst --records 8500 --dup-rate 0.4 --files 2 --compress zst --seed 43
UNIQUE=$("$PY" "$ORACLE" --input "$IN" --key-field id --stats |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["unique_keys"])')

# A Bloom capacity of ~1/3 of the unique keys, as before the corpus shrank:
# tier 1 grows layers during the runs.
COMMON_ARGS=(--input "$IN" --key-field id --batch-bytes 16384 --slices 256 --capacity 7000)
JOB_ARGS=(--output "$OUT" "${COMMON_ARGS[@]}")
STATE_ARGS=(--state "$STATE" --checkpoint-rounds 20)

# run LOG RANKS LIMIT args...: one job under mpiexec, at most LIMIT s; RC.
RC=0
run() {
  local log=$1 ranks=$2 limit=$3
  shift 3
  RC=0
  timeout -s KILL "$limit" "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$MARKED_BIN" "$@" \
    >"$log" 2>&1 || RC=$?
  kill_marker "$MARK/"
}

timeout 120 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$MARKED_BIN" dedup --output "$REF" "${COMMON_ARGS[@]}" \
  >"$TMP/ref.log" 2>&1 || { cat "$TMP/ref.log" >&2; fail "the reference run failed"; }

# --- base: an interrupted run with two generations (SIGUSR1 -> exit 75).
timeout -s KILL 120 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$MARKED_BIN" dedup "${JOB_ARGS[@]}" \
  "${STATE_ARGS[@]}" >"$TMP/base.log" 2>&1 &
JOB=$!
latest=0
for ((i = 0; i < 6000; i++)); do
  kill -0 "$JOB" 2>/dev/null || break
  [[ -f $STATE/LATEST ]] && read -r latest <"$STATE/LATEST" && ((latest >= 2)) && break
  sleep 0.01
done
kill -USR1 "$(pgrep -P "$JOB" | head -n1)" 2>/dev/null || true
RC=0
wait "$JOB" || RC=$?
JOB=0
[[ $RC == 75 ]] || { cat "$TMP/base.log" >&2; fail "SIGUSR1 after generation $latest: exit $RC, want 75"; }
mapfile -t GENS < <(find "$STATE" -maxdepth 1 -name 'ckpt-*.h5' -printf '%f\n' | sed 's/ckpt-//; s/\.h5//' | sort -n)
((${#GENS[@]} == 2)) || fail "the interrupted run left generations '${GENS[*]}', want 2"
OLD=${GENS[0]} NEW=${GENS[1]}
read -r latest <"$STATE/LATEST"
[[ $latest == "$NEW" ]] || fail "LATEST says $latest, newest file is $NEW"
"$BIN" verify --state "$STATE" >"$TMP/verify.log" 2>&1 ||
  { cat "$TMP/verify.log" >&2; fail "verify fails on the intact state"; }
"$BIN" verify --state "$STATE" --all >"$TMP/verify.log" 2>&1 ||
  { cat "$TMP/verify.log" >&2; fail "verify --all fails on the intact state"; }
"$BIN" info --state "$STATE" --json >"$TMP/info.json" 2>"$TMP/info.err" ||
  { cat "$TMP/info.err" >&2; fail "info --json fails on the intact state"; }
"$PY" - "$TMP/info.json" "$NEW" <<'EOF' || fail "info --json does not describe the newest generation"
import json, sys
info = json.load(open(sys.argv[1]))
want = {"generation": int(sys.argv[2]), "format_version": 2, "state": "unfinished"}
got = {k: info.get(k) for k in want}
if got != want or not info.get("hash_scheme"):
    print(f"info --json says {got}, hash_scheme {info.get('hash_scheme')!r}; want {want}", file=sys.stderr)
    sys.exit(1)
EOF
cp -a "$STATE" "$TMP/base-state"
cp -a "$OUT" "$TMP/base-out"
log "interrupted run: generations $OLD and $NEW, verify and info ok"

restore() {
  rm -rf "$STATE" "$OUT"
  cp -a "$TMP/base-state" "$STATE"
  cp -a "$TMP/base-out" "$OUT"
}

# flip_byte FILE DATASET: XORs one byte in the middle of a contiguous dataset,
# located by h5ls ("Address:" and "Storage: N logical bytes").
flip_byte() {
  local file=$1 dset=$2 info addr size
  info=$(h5ls -va "$file/${dset#/}") || fail "h5ls cannot show $dset in $file"
  addr=$(awk '/Address:/ {print $2; exit}' <<<"$info")
  size=$(awk '/Storage:/ {print $2; exit}' <<<"$info")
  if ! [[ $addr =~ ^[0-9]+$ && $size =~ ^[0-9]+$ && $size -gt 0 ]]; then
    fail "no contiguous storage for $dset in $file: $info"
  fi
  "$PY" - "$file" $((addr + size / 2)) <<'EOF'
import sys
path, offset = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(offset)
    b = f.read(1)
    f.seek(offset)
    f.write(bytes([b[0] ^ 0xFF]))
EOF
}

gen_file() { echo "$STATE/ckpt-$1.h5"; }
# The tier-2 run file generation G wrote (format 2: run-<G>-<tag>.h5).
run_file() {
  local f
  f=$(find "$STATE" -maxdepth 1 -name "run-$1-*.h5" | head -n1)
  [[ -n $f ]] || fail "generation $1 wrote no run file"
  echo "$f"
}
# The file holding DATASET of generation G: Bloom in the generation, tier 2 in its run.
file_of() { if [[ $2 == /tier2/* ]]; then run_file "$1"; else gen_file "$1"; fi; }

# A process that died of a signal (or dumped core) is a crash, not a refusal.
no_crash() { # LOG
  ((RC < 128)) || { cat "$1" >&2; fail "the job died of a signal (exit $RC)"; }
  grep -q -e 'signal' -e 'Segmentation' -e 'Aborted' "$1" &&
    { cat "$1" >&2; fail "a rank crashed"; }
  [[ -z $(find "$TMP" -maxdepth 1 -name 'core*') ]] || fail "a core dump was written"
  return 0
}

# verify must fail and name PATTERN (grep -E, case-insensitive).
verify_fails() { # PATTERN
  local rc=0
  "$BIN" verify --state "$STATE" >"$TMP/verify.log" 2>&1 || rc=$?
  ((rc != 0 && rc < 128)) || { cat "$TMP/verify.log" >&2; fail "verify exited $rc, want a failure"; }
  grep -Eqi -- "$1" "$TMP/verify.log" || { cat "$TMP/verify.log" >&2; fail "verify does not name '$1'"; }
}

# The damaged newest generation is skipped with a warning naming PATTERN,
# the older one resumed, and the run finishes exactly once.
resume_falls_back() { # RANKS PATTERN
  local log=$TMP/${CASE//[^A-Za-z0-9_-]/_}.log
  run "$log" "$1" 180 dedup "${JOB_ARGS[@]}" "${STATE_ARGS[@]}"
  no_crash "$log"
  [[ $RC == 0 ]] || { cat "$log" >&2; fail "resume exited $RC, want 0 after a fallback"; }
  grep -qi 'falling back' "$log" || { cat "$log" >&2; fail "no fallback warning"; }
  grep -Eqi -- "$2" "$log" || { cat "$log" >&2; fail "the fallback warning does not name '$2'"; }
  grep -q "resuming checkpoint generation $OLD" "$log" ||
    { cat "$log" >&2; fail "did not resume generation $OLD"; }
  "$PY" "$ORACLE" --input "$IN" --output "$OUT" --key-field id --expect-unique "$UNIQUE" \
    --rejects-expected 0 --compare-keys "$REF" >/dev/null ||
    fail "oracle rejected the outputs after the fallback"
  log "fell back to generation $OLD on $1 ranks, outputs exactly once"
}

# The job refuses: exit WANT_RC (a regex), stderr names PATTERN, no crash.
resume_refused() { # RANKS WANT_RC PATTERN
  local log=$TMP/${CASE//[^A-Za-z0-9_-]/_}.log
  run "$log" "$1" 180 dedup "${JOB_ARGS[@]}" "${STATE_ARGS[@]}"
  no_crash "$log"
  [[ $RC =~ ^$2$ ]] || { cat "$log" >&2; fail "exit $RC, want $2"; }
  grep -Eqi -- "$3" "$log" || { cat "$log" >&2; fail "the message does not name '$3'"; }
  log "refused with exit $RC: $(grep -Ei -m1 -- "$3" "$log" | cut -c1-200)"
}

for dset in /bloom/layer_0 /tier2/fingerprints /tier2/offsets /tier2/bytes; do
  CASE="flip $dset"
  restore
  flip_byte "$(file_of "$NEW" "$dset")" "$dset"
  verify_fails "${dset##*/}"
  resume_falls_back 3 "${dset##*/}"
done

CASE="truncated newest"
restore
truncate -s $(($(stat -c %s "$(gen_file "$NEW")") / 2)) "$(gen_file "$NEW")"
verify_fails "ckpt-$NEW"
resume_falls_back 1 "truncated|superblock"

CASE="run file of the newest missing"
restore
rm -f "$(run_file "$NEW")"
verify_fails "missing run file"
resume_falls_back 2 "missing run file"

CASE="LATEST dangling"
restore
echo $((NEW + 7)) >"$STATE/LATEST"
CLOG=$TMP/latest-dangling.log
run "$CLOG" 2 180 dedup "${JOB_ARGS[@]}" "${STATE_ARGS[@]}"
no_crash "$CLOG"
[[ $RC == 0 ]] || { cat "$CLOG" >&2; fail "exit $RC, want 0"; }
grep -q "resuming checkpoint generation $NEW" "$CLOG" ||
  { cat "$CLOG" >&2; fail "did not resume the newest existing generation $NEW"; }
"$PY" "$ORACLE" --input "$IN" --output "$OUT" --key-field id --expect-unique "$UNIQUE" \
  --rejects-expected 0 --compare-keys "$REF" >/dev/null || fail "oracle rejected the outputs"
log "resumed generation $NEW, outputs exactly once"

CASE="future format_version in newest"
restore
"$PATCH" "$(gen_file "$NEW")" format_version 99
"$BIN" info --state "$STATE" >"$TMP/info.log" 2>&1 || true
grep -q 99 "$TMP/info.log" || { cat "$TMP/info.log" >&2; fail "info does not name format_version 99"; }
verify_fails "format_version 99|version 99"
resume_falls_back 2 "format_version 99"

CASE="all generations damaged"
restore
flip_byte "$(gen_file "$NEW")" /bloom/layer_0
flip_byte "$(run_file "$OLD")" /tier2/bytes
verify_fails "FAILED|mismatch"
rc=0
"$BIN" verify --state "$STATE" --all >"$TMP/verify.log" 2>&1 || rc=$?
if ((rc == 0)) || [[ $(grep -c -i 'failed' "$TMP/verify.log") -lt 2 ]]; then
  cat "$TMP/verify.log" >&2
  fail "verify --all (exit $rc) does not report both generations"
fi
resume_refused 2 1 "no checkpoint generation.*verifies|cannot resume"

CASE="all generations of a future format"
restore
"$PATCH" "$(gen_file "$NEW")" format_version 99
"$PATCH" "$(gen_file "$OLD")" format_version 98
resume_refused 3 1 "format_version (99|98)"

CASE="foreign hash scheme in newest"
restore
"$PATCH" "$(gen_file "$NEW")" hash_scheme xxh3-128/v999
"$BIN" info --state "$STATE" --json >"$TMP/info.json" 2>&1 || true
grep -q 'xxh3-128/v999' "$TMP/info.json" || { cat "$TMP/info.json" >&2; fail "info does not show the hash scheme"; }
resume_refused 2 '[12]' "xxh3-128/v999"

CASE=summary
log "PASS in $SECONDS s"
