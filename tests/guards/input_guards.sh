#!/usr/bin/env bash
# shellcheck disable=SC2034 # WATCH and the case variables are read by guard_expect.sh
# Each input-change signal alone (size with the mtime put back, mtime,
# content under the same size and mtime, rename, removal, addition), between a stop and the next start
# of the same command, through the real binary under mpiexec
# (docs/inputs.md "Changing the inputs", docs/guards.md). From a copy of the
# same saved run for every case:
#   running   an unfinished run (ended by a broken input): 1-a.jsonl
#             finished, 2-b.jsonl.gz read in part, 3-c.jsonl not started
#   finished  a finished run of 1-a.jsonl and 2-b.jsonl
# a change that would lose or double records is refused with its exit code
# and a message naming the input and what changed (both sizes, both mtimes),
# the state and the outputs untouched; a change the docs accept says so on
# stderr and the run goes on. The unchanged inputs are the control: a
# resume, or "the run in 'S' already finished for these inputs; nothing to do".
#
# usage: input_guards.sh BIN --run running|finished [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
# KEEP_TMP=1 keeps the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/guard_expect.sh"
harness_parse input_guards.sh "BIN --run=RUN* --ranks=RANKS:2" "$@"
harness_tmp "guards-inputs-$RUN" 'inputs $RUN, $RANKS ranks'
cd "$TMP" || exit 1

"$PY" - "$RUN" <<'EOF'
import gzip, json, os, sys
def lines(a, b):
    return "".join(json.dumps({"id": f"doc-{i % 900:05d}", "text": f"record {i}"}) + "\n"
                   for i in range(a, b))
os.makedirs("in", exist_ok=True)
open("in/1-a.jsonl", "w").write(lines(0, 1200))
if sys.argv[1] == "running":
    # A gzip stream cut short: its first records read, then the damage.
    z = gzip.compress(lines(1200, 2400).encode())
    open("in/2-b.jsonl.gz", "wb").write(z[: len(z) * 3 // 5])
    open("in/3-c.jsonl", "w").write(lines(2400, 3000))
else:
    open("in/2-b.jsonl", "w").write(lines(1200, 2000))
EOF
ISO='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{9}Z'
JOB=(dedup --input in --output out --state S --key-field id)
run_mpi() { "$MPIEXEC" "$NP_FLAG" "$1" --oversubscribe "$BIN" "${@:2}"; }

if [[ $RUN == running ]]; then
  JOB+=(--on-input-error fail)
  run_case make-S run_mpi 1 "${JOB[@]}"
  [[ $RC == 1 ]] || { cat "$TMP/make-S.log" >&2; fail "the broken input did not end the run (exit $RC)"; }
  "$BIN" info --state S --json | "$PY" -c '
import json, sys
i = json.load(sys.stdin)
assert i["state"] == "unfinished", i["state"]
p = {x["path"]: x for x in i["inputs"]}
assert p["1-a.jsonl"]["done"], p
assert not p["2-b.jsonl.gz"]["done"] and p["2-b.jsonl.gz"]["records_done"] > 0, p
assert p["3-c.jsonl"]["records_done"] == 0 and not p["3-c.jsonl"]["done"], p' ||
    fail "the saved run is not a started 2-b.jsonl.gz between a finished and an unstarted input"
  REFUSAL="the unfinished run in 'S' cannot go on: "
  B_READ="after [0-9]+ of its records were read"
else
  run_case make-S run_mpi "$RANKS" "${JOB[@]}"
  [[ $RC == 0 ]] || { cat "$TMP/make-S.log" >&2; fail "the first run: exit $RC"; }
  REFUSAL="the run in 'S' finished, and its inputs changed since: "
fi
mkdir snap
cp -a in S out snap/
WATCH=(S out)
restore() {
  rm -rf in S out
  cp -a snap/in snap/S snap/out .
}

# The changes, each on a fresh copy of the saved run.
grow() { # a record appended (a gzip member for .gz)
  local line='{"id":"doc-new-1","text":"appended"}'
  if [[ $1 == *.gz ]]; then echo "$line" | gzip -c >>"$1"; else echo "$line" >>"$1"; fi
}
grow_same_mtime() { # a record appended, the mtime put back: the size alone differs
  cp -p "$1" ref
  grow "$1"
  touch -r ref "$1"
  rm ref
}
touch_later() { touch -d "@$(($(stat -c %Y "$1") + 90))" "$1"; }
same_size_and_mtime() { # other bytes in the first 4 KiB, size and mtime restored
  cp -p "$1" ref
  "$PY" - "$1" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[40] ^= 0x20 if p.endswith(".jsonl") else 0x01  # "doc-" -> "DOC-"-style for text
open(p, "r+b").write(b)
EOF
  touch -r ref "$1"
  rm ref
  [[ $(stat -c %s:%y "$1") == $(stat -c %s:%y "snap/$1") ]] || fail "$1: size or mtime not restored"
  ! cmp -s "$1" "snap/$1" || fail "$1: content not changed"
}

# Size, mtime and content of a finished input: refused in both runs.
A=in/1-a.jsonl
A_SIZE=$(stat -c %s "$A")
restore
grow "$A"
expect_refused "$RUN.finished_input.size" 2 "$REFUSAL" \
  "input '1-a.jsonl' changed after it was finished \\(size $A_SIZE -> $((A_SIZE + 37)) bytes \\(grew by 37\\), mtime $ISO -> $ISO\\); its new records would never be read" -- \
  run_mpi "$RANKS" "${JOB[@]}"
restore
grow_same_mtime "$A"
expect_refused "$RUN.finished_input.size_only" 2 "$REFUSAL" \
  "input '1-a.jsonl' changed after it was finished \\(size $A_SIZE -> $((A_SIZE + 37)) bytes \\(grew by 37\\), mtime $ISO \\(same\\)\\)" -- \
  run_mpi "$RANKS" "${JOB[@]}"
restore
touch_later "$A"
expect_refused "$RUN.finished_input.mtime" 2 "$REFUSAL" \
  "input '1-a.jsonl' changed after it was finished \\(size $A_SIZE -> $A_SIZE bytes \\(same size\\), mtime $ISO -> $ISO\\)" -- \
  run_mpi "$RANKS" "${JOB[@]}"
restore
same_size_and_mtime "$A"
expect_refused "$RUN.finished_input.content" 2 "$REFUSAL" \
  "input '1-a.jsonl' was replaced after it was finished: its size and mtime are the saved ones \\($A_SIZE bytes, $ISO\\) but" -- \
  run_mpi "$RANKS" "${JOB[@]}"

if [[ $RUN == running ]]; then
  B=in/2-b.jsonl.gz
  B_SIZE=$(stat -c %s "$B")
  # The input being read: every change of its bytes is refused.
  restore
  grow "$B"
  expect_refused running.started_input.size 2 "$REFUSAL" \
    "input '2-b.jsonl.gz' changed $B_READ \\(size $B_SIZE -> [0-9]+ bytes \\(grew by [0-9]+\\), mtime $ISO -> $ISO\\)" -- \
    run_mpi "$RANKS" "${JOB[@]}"
  restore
  grow_same_mtime "$B"
  expect_refused running.started_input.size_only 2 "$REFUSAL" \
    "input '2-b.jsonl.gz' changed $B_READ \\(size $B_SIZE -> [0-9]+ bytes \\(grew by [0-9]+\\), mtime $ISO \\(same\\)\\)" -- \
    run_mpi "$RANKS" "${JOB[@]}"
  restore
  touch_later "$B"
  expect_refused running.started_input.mtime 2 "$REFUSAL" \
    "input '2-b.jsonl.gz' changed $B_READ \\(size $B_SIZE -> $B_SIZE bytes \\(same size\\), mtime $ISO -> $ISO\\)" -- \
    run_mpi "$RANKS" "${JOB[@]}"
  restore
  same_size_and_mtime "$B"
  expect_refused running.started_input.content 2 "$REFUSAL" \
    "input '2-b.jsonl.gz' was replaced after some of its records were read: its size and mtime are the saved ones \\($B_SIZE bytes, $ISO\\)" -- \
    run_mpi "$RANKS" "${JOB[@]}"
  # Renamed: the old name is gone (its read records count) and the new
  # name is an input the run does not know.
  restore
  mv "$B" in/2-b-renamed.jsonl.gz
  expect_refused running.started_input.rename 2 "$REFUSAL" \
    "input '2-b-renamed.jsonl.gz' is not part of the run" -- run_mpi "$RANKS" "${JOB[@]}"
  restore
  echo '{"id":"doc-added","text":"added"}' >in/4-d.jsonl
  expect_refused running.addition 2 "$REFUSAL" "input '4-d.jsonl' is not part of the run" -- \
    run_mpi "$RANKS" "${JOB[@]}"
  # Accepted, said on stderr: the read part of a removed input counts, the
  # rest is skipped; an input not yet started is read with its new content.
  restore
  rm "$B"
  expect_note running.started_input.removal \
    "input '2-b.jsonl.gz' was removed after [0-9]+ records; they count, the rest is recorded as skipped" -- \
    run_mpi "$RANKS" "${JOB[@]}"
  restore
  grow in/3-c.jsonl
  expect_note running.unstarted_input.size \
    "input '3-c.jsonl' changed before it was started; its new content is read" -- \
    run_mpi "$RANKS" "${JOB[@]/fail/skip}"
  restore
  rm "$A"
  expect_note running.finished_input.removal \
    "input '1-a.jsonl' was removed after it was finished; nothing of it is read again" -- \
    run_mpi "$RANKS" "${JOB[@]/fail/skip}"
  # Control: the unchanged inputs resume.
  restore
  expect_note running.control "resuming" -- run_mpi "$RANKS" "${JOB[@]/fail/skip}"
else
  # Other input paths make an incremental run, which may not write into
  # the finished run's outputs: refused by the output guard (exit 4).
  OUT_GUARD="output dir 'out' holds the outputs of an earlier run"
  restore
  mv "$A" in/1-a-renamed.jsonl
  expect_refused finished.rename 4 "$OUT_GUARD" -- run_mpi "$RANKS" "${JOB[@]}"
  restore
  rm "$A"
  expect_refused finished.removal 4 "$OUT_GUARD" -- run_mpi "$RANKS" "${JOB[@]}"
  restore
  echo '{"id":"doc-added","text":"added"}' >in/3-d.jsonl
  expect_refused finished.addition 4 "$OUT_GUARD" -- run_mpi "$RANKS" "${JOB[@]}"
  # Control: unchanged, nothing to do, nothing written.
  restore
  expect_refused finished.control 0 "the run in 'S' already finished for these inputs; nothing to do" -- \
    run_mpi "$RANKS" "${JOB[@]}"
fi
log "every input-change signal of a $RUN run was refused or reported"
