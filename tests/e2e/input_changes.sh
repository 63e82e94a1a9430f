#!/usr/bin/env bash
# Inputs that change between a stop and the next start (docs/inputs.md
# "Changing the inputs"): every change of a started input is either a loud
# refusal (exit 2, naming the file and what changed: sizes in bytes, mtimes
# as UTC ISO-8601) or, with --revalidate-inputs where valid, read exactly
# once (oracle.py over today's inputs).
#
# usage: input_changes.sh --case NAME --ranks N --bin BLOOMSHARD --oracle-dir DIR
#                         [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# cases: resume    a 1-rank run stopped by SIGUSR1 while it reads d (a, b.gz, c.zst
#                  finished, e not started); from copies of that stop, resumed at N
#                  ranks: a finished input grown (plain, gzip member, zstd frame),
#                  shrunk, rewritten at the same size, replaced with size and mtime
#                  restored (touch -d); the running input replaced the same way,
#                  and grown; the unstarted input replaced
#        finished  a finished run at N ranks started again: a grown input refused,
#                  then read on with --revalidate-inputs (exactly once, appended to
#                  its output), then "already finished"; a replaced one refused;
#                  a grown split input refused even with --revalidate-inputs
#        empty     zero-byte .gz and .zst inputs: skipped (listed in skipped_inputs)
#                  under skip, exit 1 naming the file under fail
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_changes.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --oracle-dir=ORACLE_DIR*" "$@"
[[ -f $ORACLE_DIR/oracle.py ]] || harness_usage "no oracle.py in --oracle-dir $ORACLE_DIR"
harness_tmp "inputs-$CASE-$RANKS" "$CASE, $RANKS ranks"
IN=$TMP/in OUT=$TMP/out ST=$TMP/state SNAP=$TMP/snap META=$TMP/meta
mkdir -p "$IN" "$META"
start=$SECONDS

synth() { # NAME synth-options...: corpus into IN/NAME
  local name=$1
  shift
  "$BIN" synth --out "$IN/$name" --manifest "$META/$name.json" --files 1 "$@" >/dev/null
}

# job RANKS LOG options...: dedup of IN into OUT with ST; its exit code in RC.
job() {
  local ranks=$1 logf=$2
  shift 2
  set +e
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --input "$IN" --output "$OUT" \
    --state "$ST" --key-field id --metrics "$OUT/metrics.json" "$@" >"$logf" 2>&1
  RC=$?
  set -e
}

# expect_refusal WHAT PATTERN... -- options: exit 2, the log holds every pattern
# (grep -E), and nothing was written (the state's LATEST did not move).
expect_refusal() {
  local what=$1
  shift
  local patterns=()
  while [[ $1 != -- ]]; do
    patterns+=("$1")
    shift
  done
  shift
  local latest
  latest=$(cat "$ST/LATEST")
  job "$RANKS" "$TMP/refused.log" "$@"
  [[ $RC == 2 ]] || { cat "$TMP/refused.log" >&2; fail "$what: exit $RC, want 2"; }
  for p in "${patterns[@]}"; do
    grep -Eq -- "$p" "$TMP/refused.log" ||
      { cat "$TMP/refused.log" >&2; fail "$what: the refusal does not say /$p/"; }
  done
  [[ $(cat "$ST/LATEST") == "$latest" ]] || fail "$what: a refused start wrote a checkpoint"
  log "$what: refused: $(grep -o "input '[^']*' .*" "$TMP/refused.log" | head -c 300)"
}

# expect_exactly_once WHAT options...: the job completes and oracle.py finds
# every key of today's inputs exactly once, each output a subsequence of its input.
expect_exactly_once() {
  local what=$1
  shift
  job "$RANKS" "$TMP/ok.log" "$@"
  [[ $RC == 0 ]] || { cat "$TMP/ok.log" >&2; fail "$what: exit $RC, want 0"; }
  "$PY" "$ORACLE_DIR/oracle.py" --input "$IN" --output "$OUT" --key-field id \
    --rejects-expected 0 || { cat "$TMP/ok.log" >&2; fail "$what: oracle rejected the outputs"; }
}

ISO='mtime [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z'

# new_records TAG N: N JSONL records with keys no input has, then 5 copies
# of a's first keys (duplicates the job must drop).
new_records() {
  for ((i = 0; i < $2; i++)); do echo "{\"id\":\"appended-$1-$i\",\"text\":\"new\"}"; done
  head -n 5 "$IN/a/part-00000.jsonl"
}

# in_output ID: the record with this id is in some output file.
in_output() {
  "$PY" - "$OUT" "$1" <<'EOF'
import gzip, os, subprocess, sys
out, want = sys.argv[1], sys.argv[2].encode()
for d, _, names in os.walk(out):
    for n in names:
        p = os.path.join(d, n)
        if n.endswith(".gz"):
            data = gzip.open(p).read()
        elif n.endswith(".zst"):
            data = subprocess.run(["zstd", "-dcq", p], check=True, capture_output=True).stdout
        else:
            data = open(p, "rb").read()
        if b'"' + want + b'"' in data:
            sys.exit(0)
sys.exit(1)
EOF
}

# same_size_other_bytes FILE OFFSET: overwrites one byte at OFFSET (a digit
# or letter of a key turned into another), keeping size and mtime.
same_size_other_bytes() {
  local f=$1 at=$2 stamp
  stamp=$(stat -c %y "$f")
  "$PY" - "$f" "$at" <<'EOF'
import sys
path, at = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
data[at] = ord("Q") if data[at] != ord("Q") else ord("R")
open(path, "r+b").write(data)
EOF
  touch -d "$stamp" "$f"
}

# info_inputs: "path records_done bytes_done done" per input of the state.
info_inputs() {
  "$BIN" info --state "$ST" --json | "$PY" -c '
import json, sys
for p in json.load(sys.stdin)["inputs"]:
    print(p["path"], p["records_done"], p["bytes_done"], int(p["done"]))'
}

# --- resume: one stop, many changes (each from a copy of the stop) --------
case_resume() {
  synth a --records 1500 --dup-rate 0.2 --compress none --seed 601
  synth b --records 1500 --dup-rate 0.2 --compress gz --seed 602
  synth c --records 1500 --dup-rate 0.2 --compress zst --seed 603
  synth d --records 20000 --dup-rate 0.2 --compress none --seed 604
  synth e --records 1000 --dup-rate 0.2 --compress none --seed 605
  # One rank reads in path order; tiny batches and a checkpoint per round
  # make d take many rounds, and SIGUSR1 after the first generation stops
  # the job inside d (checked below from the state, never assumed).
  mkdir -p "$OUT"
  "$MPIEXEC" "$NP_FLAG" 1 --oversubscribe "$BIN" dedup --input "$IN" --output "$OUT" \
    --state "$ST" --key-field id --split-inputs off --batch-bytes 4096 --checkpoint-rounds 1 \
    >"$TMP/stop.log" 2>&1 &
  local job_pid=$!
  local seen=0
  for ((i = 0; i < 6000; i++)); do
    if [[ -e $ST/LATEST ]] && info_inputs 2>/dev/null | grep -q '^d/part-00000.jsonl [1-9]'; then
      seen=1
      break
    fi
    kill -0 "$job_pid" 2>/dev/null || break
    sleep 0.01
  done
  kill -USR1 "$job_pid" 2>/dev/null || true # mpiexec forwards it to the rank
  local rc=0
  wait "$job_pid" || rc=$?
  ((seen == 1)) || { cat "$TMP/stop.log" >&2; fail "no checkpoint inside d before the job ended"; }
  ((rc == 75)) || { cat "$TMP/stop.log" >&2; fail "SIGUSR1: exit $rc, want 75 (checkpointed)"; }
  info_inputs >"$TMP/stop.inputs"
  "$PY" - "$TMP/stop.inputs" "$(stat -c %s "$IN/d/part-00000.jsonl")" <<'EOF' ||
import sys
rows = {l.split()[0]: l.split()[1:] for l in open(sys.argv[1])}
size = int(sys.argv[2])
for f in ("a/part-00000.jsonl", "b/part-00000.jsonl.gz", "c/part-00000.jsonl.zst"):
    assert rows[f][2] == "1", f + " is not finished"
d = rows["d/part-00000.jsonl"]
assert d[2] == "0" and 4096 < int(d[1]) < size, "d is not stopped in its middle: %s" % d
assert rows["e/part-00000.jsonl"][0] == "0", "e was started"
EOF
    { cat "$TMP/stop.inputs" >&2; fail "the stop is not the one this case needs"; }
  log "stopped inside d: $(grep '^d/' "$TMP/stop.inputs")"
  mkdir -p "$SNAP"
  cp -a "$IN" "$ST" "$OUT" "$SNAP/"
  restore() {
    rm -rf "$IN" "$ST" "$OUT"
    cp -a "$SNAP/in" "$SNAP/state" "$SNAP/out" "$TMP/"
  }
  local a=$IN/a/part-00000.jsonl b=$IN/b/part-00000.jsonl.gz c=$IN/c/part-00000.jsonl.zst
  local d=$IN/d/part-00000.jsonl e=$IN/e/part-00000.jsonl
  local cursor
  cursor=$(awk '$1 == "d/part-00000.jsonl" {print $3}' "$TMP/stop.inputs")

  # 1. A finished plain input grew: refused, then read on exactly once.
  restore
  local before
  before=$(stat -c %s "$a")
  new_records a 40 >>"$a"
  expect_refusal "finished input grown" "'a/part-00000.jsonl' changed after it was finished" \
    "size $before -> [0-9]+ bytes \\(grew by [0-9]+\\)" "$ISO -> " "--revalidate-inputs" --
  expect_exactly_once "finished input grown, --revalidate-inputs" --revalidate-inputs
  grep -q "the records appended after them are read now" "$TMP/ok.log" ||
    { cat "$TMP/ok.log" >&2; fail "the revalidation of a is not reported"; }
  in_output appended-a-39 || fail "the appended records of a are not in the output"
  log "finished plain input grown: refused, then its 40 new records written exactly once"

  # 2, 3. A finished .gz grew by a member, a finished .zst by a frame.
  restore
  new_records b 30 | gzip -c >>"$b"
  new_records c 30 | zstd -q -c >>"$c"
  expect_refusal "finished gzip grown" "'b/part-00000.jsonl.gz' changed after it was finished" --
  expect_exactly_once "finished gzip and zstd grown, --revalidate-inputs" --revalidate-inputs
  in_output appended-b-29 || fail "the appended gzip member is not in the output"
  in_output appended-c-29 || fail "the appended zstd frame is not in the output"
  log "finished .gz grown by a member and .zst by a frame: exactly once"

  # 4. A finished input shrank: refused, also with --revalidate-inputs.
  restore
  truncate -s $(($(stat -c %s "$a") - 50)) "$a"
  expect_refusal "finished input shrunk" "'a/part-00000.jsonl' changed after it was finished" \
    "shrank by 50" --
  expect_refusal "finished input shrunk, --revalidate-inputs" "cannot be revalidated" -- \
    --revalidate-inputs

  # 5. Truncated, then regrown to its size with other bytes (new mtime).
  restore
  head -c 1000 "$a" >"$TMP/head"
  "$PY" -c 'import sys; d = open(sys.argv[1], "rb").read(); sys.stdout.buffer.write(d[1000:])' \
    "$a" | tr '0-9' '1-90' >"$TMP/tail"
  cat "$TMP/head" "$TMP/tail" >"$a"
  expect_refusal "finished input rewritten" "changed after it was finished" "same size" -- \
    --revalidate-inputs
  grep -q "cannot be revalidated: its first" "$TMP/refused.log" || fail "no reason for the rewrite"

  # 6. A finished input replaced with size and mtime restored (touch -d).
  restore
  same_size_other_bytes "$a" $(($(stat -c %s "$a") - 30))
  expect_refusal "finished input replaced, mtime restored" \
    "'a/part-00000.jsonl' was replaced after it was finished" "size and mtime are the saved ones" \
    "before byte [0-9]+ are not the ones the checkpoint saw" --
  expect_refusal "finished input replaced, --revalidate-inputs" "cannot be revalidated" -- \
    --revalidate-inputs

  # 7. The running input replaced before its cursor, size and mtime restored:
  # the old output would have gone on with the new file's tail.
  restore
  same_size_other_bytes "$d" $((cursor - 100))
  expect_refusal "running input replaced, mtime restored" \
    "'d/part-00000.jsonl' was replaced after some of its records were read" \
    "before byte $cursor are not the ones" --
  expect_refusal "running input replaced, --revalidate-inputs" \
    "cannot be revalidated: its first [0-9]+ records are not the ones read before" -- \
    --revalidate-inputs
  # ... and in its first bytes.
  restore
  same_size_other_bytes "$d" 20
  expect_refusal "running input replaced at its start" "its first 4096 bytes" --

  # 8. The running input grew: refused, then read on exactly once.
  restore
  new_records d 25 >>"$d"
  expect_refusal "running input grown" "'d/part-00000.jsonl' changed after [0-9]+ of its records" \
    "grew by" --
  expect_exactly_once "running input grown, --revalidate-inputs" --revalidate-inputs
  in_output appended-d-24 || fail "the appended records of d are not in the output"

  # 9. The input not yet started replaced (size and mtime restored): its new
  # content is read (nothing of it was read before), exactly once.
  restore
  same_size_other_bytes "$e" 12
  expect_exactly_once "unstarted input replaced"

  # 10. Nothing changed: the resume completes, exactly once.
  restore
  expect_exactly_once "unchanged resume"
  log "shrunk, rewritten, replaced (finished and running) refused; grown read on exactly once"
}

# --- finished: the same command again on changed inputs ---------------------
case_finished() {
  synth a --records 4000 --dup-rate 0.2 --compress none --seed 701
  synth b --records 4000 --dup-rate 0.2 --compress gz --seed 702
  synth d --records 20000 --dup-rate 0.3 --compress none --seed 703
  local a=$IN/a/part-00000.jsonl b=$IN/b/part-00000.jsonl.gz
  mkdir -p "$OUT"
  expect_exactly_once "first run" --split-inputs off

  # 1. Grown: refused; read on with --revalidate-inputs; then finished.
  new_records a 50 >>"$a"
  new_records b 20 | gzip -c >>"$b"
  local out_len
  out_len=$(stat -c %s "$OUT/a/part-00000.jsonl")
  expect_refusal "finished run, inputs grown" "the run in '.*' finished, and its inputs changed" \
    "'a/part-00000.jsonl' changed after it was finished" "grew by" "$ISO -> " --
  expect_exactly_once "finished run, --revalidate-inputs" --revalidate-inputs
  in_output appended-a-49 || fail "the appended records of a are not in the output"
  in_output appended-b-19 || fail "the appended gzip member of b is not in the output"
  (($(stat -c %s "$OUT/a/part-00000.jsonl") > out_len)) || fail "a's output did not grow"
  job "$RANKS" "$TMP/again.log"
  [[ $RC == 0 ]] && grep -q "already finished" "$TMP/again.log" ||
    { cat "$TMP/again.log" >&2; fail "after the revalidated run: exit $RC, not finished"; }
  log "finished run on grown inputs: refused, then the appended records exactly once, then finished"

  # 2. Replaced with size and mtime restored: refused (window digest).
  cp -p "$IN/d/part-00000.jsonl" "$TMP/d.keep"
  same_size_other_bytes "$IN/d/part-00000.jsonl" 100
  expect_refusal "finished run, input replaced" \
    "'d/part-00000.jsonl' was replaced after it was finished" "its first 4096 bytes" --
  cp -p "$TMP/d.keep" "$IN/d/part-00000.jsonl" # back to the bytes and mtime that were read
  job "$RANKS" "$TMP/again.log"
  [[ $RC == 0 ]] && grep -q "already finished" "$TMP/again.log" ||
    { cat "$TMP/again.log" >&2; fail "the restored input: exit $RC, not finished"; }
  log "finished run, an input replaced with size and mtime restored: refused"

  # 3. A split input (ranges, N > 1 ranks) that grew: refused, also with
  # --revalidate-inputs.
  if ((RANKS > 1)); then
    rm -rf "$ST" "$OUT"
    mkdir -p "$OUT"
    expect_exactly_once "split run" --split-inputs auto --split-min-bytes 100000
    grep -q "split 1 input(s)" "$TMP/ok.log" || { cat "$TMP/ok.log" >&2; fail "d was not split"; }
    new_records d 10 >>"$IN/d/part-00000.jsonl"
    expect_refusal "finished split input grown" \
      "'d/part-00000.jsonl' was split into byte ranges and changed after it was finished" \
      "split input cannot be revalidated" -- --revalidate-inputs
  fi
}

# --- empty: zero-byte compressed inputs --------------------------------------
case_empty() {
  synth a --records 3000 --dup-rate 0.2 --compress gz --seed 801
  synth b --records 3000 --dup-rate 0.2 --compress zst --seed 802
  mkdir -p "$IN/z"
  : >"$IN/z/empty.jsonl.gz"
  : >"$IN/z/empty.jsonl.zst"
  : >"$IN/z/empty.jsonl" # a zero-byte plain file is simply empty
  mkdir -p "$OUT"
  job "$RANKS" "$TMP/fail.log" --on-input-error fail
  [[ $RC == 1 ]] || { cat "$TMP/fail.log" >&2; fail "fail mode: exit $RC, want 1"; }
  grep -Eq "z/empty.jsonl.(gz|zst).*truncated (gzip|zstd) stream \(empty file" "$TMP/fail.log" ||
    { cat "$TMP/fail.log" >&2; fail "fail mode: the error does not name the empty file"; }
  rm -rf "$ST" "$OUT"
  mkdir -p "$OUT"
  job "$RANKS" "$TMP/skip.log"
  [[ $RC == 0 ]] || { cat "$TMP/skip.log" >&2; fail "skip mode: exit $RC, want 0"; }
  "$PY" - "$OUT/metrics.json" <<'EOF' || fail "skipped_inputs does not list both empty files"
import json, sys
skipped = {s["file"]: s for s in json.load(open(sys.argv[1]))["skipped_inputs"]}
assert set(skipped) == {"z/empty.jsonl.gz", "z/empty.jsonl.zst"}, skipped
for s in skipped.values():
    assert s["record"] == 1 and s["offset"] == 0 and s["records_read"] == 0, s
    assert "empty file" in s["reason"], s
EOF
  "$PY" "$ORACLE_DIR/oracle.py" --input "$IN" --output "$OUT" --key-field id \
    --skipped-inputs "$OUT/metrics.json" --rejects-expected 0 ||
    fail "oracle rejected the outputs of the skip run"
  log "zero-byte .gz/.zst: exit 1 under fail, listed in skipped_inputs under skip"
}

case "$CASE" in
  resume | finished | empty) "case_$CASE" ;;
  *) echo "input_changes.sh: unknown case '$CASE'" >&2; exit 2 ;;
esac
log "PASS in $((SECONDS - start)) s"
