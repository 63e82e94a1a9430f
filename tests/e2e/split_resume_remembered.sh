#!/usr/bin/env bash
# A split input resumed in file order (--kept-copy arrival: the split
# input's own order, rebuilt from its parts at a resume; the first-copy
# order saves its table instead), through the real binary: records of
# 5 KB and --batch-bytes 4096 make each rank read one record a round; a stop
# (TERM) that arrives while the job is held after its first checkpoint
# (BLOOMSHARD_FAULT_PAUSE_IN_FINISH=after-first-checkpoint) makes that
# generation the stop's, with exactly one kept record of the later range.
# The resume on the same ranks says "remembered 1 kept record(s)" of the
# later ranges, joins the split input, and its output is byte-identical to
# a 1-rank run with --split-inputs off (exactly once).
#
# usage: split_resume_remembered.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse split_resume_remembered.sh "BIN" "$@"
harness_tmp split-remembered "split resume remembered"
harness_marker
cd "$TMP" || exit 1

mkdir in
"$PY" -c '
import json
with open("in/big.jsonl", "w") as f:
    for i in range(40):
        f.write(json.dumps({"id": "k%03d" % (i % 30), "text": "x" * 5000}) + "\n")'
ln -s "$BIN" "$MARK/bs-split"
JOB=(dedup --input in --output out --state S --key-field id --split-min-bytes 4096
  --batch-bytes 4096 --checkpoint-rounds 1 --progress 0 --kept-copy arrival)

BLOOMSHARD_FAULT_PAUSE_IN_FINISH=after-first-checkpoint \
  setsid "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$MARK/bs-split" "${JOB[@]}" >first.log 2>&1 &
PID=$!
for _ in $(seq 1 300); do
  grep -q "fault pause at after-first-checkpoint" first.log && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.2
done
grep -q "fault pause at after-first-checkpoint" first.log || { cat first.log >&2; fail "the job never paused"; }
kill -TERM "$PID"
wait "$PID" || true
grep -q "checkpointed generation written; exit 75" first.log || { cat first.log >&2; fail "the stop was not checkpointed"; }

timeout 120 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" "${JOB[@]}" >resume.log 2>&1 ||
  { cat resume.log >&2; fail "the resume failed"; }
grep -q "remembered 1 kept record(s) of split inputs' later ranges" resume.log ||
  { cat resume.log >&2; fail "the resume does not say it remembered the 1 kept record of the later range"; }
grep -q "joined the ranges of 1 split input" resume.log || { cat resume.log >&2; fail "no join"; }

timeout 120 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" dedup --input in --output one --key-field id \
  --split-inputs off --progress 0 >one.log 2>&1 || { cat one.log >&2; fail "the 1-rank run failed"; }
cmp out/big.jsonl one/big.jsonl || fail "the resumed split output differs from the 1-rank run"
log "ok"
