#!/usr/bin/env bash
# A finished run of a split input, through the real binary: the finishing
# generation records the joined input as done with the length of its mirror
# (`info --json`), no part is left, and the same command started again says
# "already finished ... nothing to do", exits 0 and leaves the outputs as
# they were (never a refusal for the parts the join removed).
#
# usage: split_finished.sh BIN [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse split_finished.sh "BIN --ranks=RANKS:2" "$@"
harness_tmp split-finished "split finished, $RANKS ranks"
cd "$TMP" || exit 1

"$BIN" synth --records 20000 --dup-rate 0.3 --files 1 --compress none --seed 3 --out in >/dev/null
JOB=(dedup --input in --output out --state S --key-field id --split-min-bytes 65536
  --batch-bytes 65536)
run_job() { # LOG
  timeout 120 "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" "${JOB[@]}" >"$1" 2>&1
}

run_job first.log || { cat first.log >&2; fail "the split run failed"; }
grep -q "joined the ranges of 1 split input" first.log || { cat first.log >&2; fail "the input was not split"; }
[[ ! -e out/_ranges ]] || fail "parts left in out/_ranges after the join"
MIRROR=$(stat -c %s out/part-00000.jsonl)
"$BIN" info --state S --json | "$PY" -c '
import json, sys
i = json.load(sys.stdin)
want = int(sys.argv[1])
assert i["state"] == "finished", i["state"]
[p] = i["inputs"]
assert p["done"], "the joined input is not recorded done: %s" % p
assert p["output_length"] == want, "output_length %d, the mirror has %d bytes" % (p["output_length"], want)
' "$MIRROR" || fail "the finishing generation does not record the joined input"

before=$(sha256sum out/part-00000.jsonl)
run_job again.log || { cat again.log >&2; fail "the same command again exited $?, want 0"; }
grep -q "already finished for these inputs; nothing to do" again.log ||
  { cat again.log >&2; fail "the same command again did not say the run already finished"; }
[[ $(sha256sum out/part-00000.jsonl) == "$before" ]] || fail "the start after the finish changed the output"
log "ok"
