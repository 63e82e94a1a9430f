#!/usr/bin/env bash
# What the program says, through the real binary and real mpiexec:
#  - a resumed or incremental run names, once, each explicitly given option the
#    state overrides (--fpr, --capacity, --slices), with both values, and
#    nothing for options left at their defaults;
#  - merge on a missing --from path says it does not exist (exit 2);
#  - a --unit paragraph summary counts records and paragraphs apart, each
#    percentage of its own whole;
#  - synth reports the files' size on disk and the uncompressed size;
#  - an error all ranks agree on (a checkpoint that cannot be written) is
#    printed once, not once per rank.
#
# usage: messages.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse messages.sh "BIN" "$@"
harness_tmp messages "messages"
count() { grep -cF -- "$1" "$2" || true; }
run() { "$MPIEXEC" "$NP_FLAG" "$@"; }

# --- the state's values win, and say so once (2 ranks).
"$BIN" synth --out "$TMP/a" --manifest "$TMP/a.json" --records 20000 --dup-rate 0.2 --seed 1 >/dev/null
"$BIN" synth --out "$TMP/b" --manifest "$TMP/b.json" --records 20000 --dup-rate 0.2 --seed 2 >/dev/null
run 2 "$BIN" dedup --input "$TMP/a" --output "$TMP/out-a" --state "$TMP/state" --fpr 0.001 \
  --capacity 30000 --slices 128 >"$TMP/first.log" 2>&1 || { cat "$TMP/first.log" >&2; fail "first run"; }
grep -q "is used; this job asked" "$TMP/first.log" && fail "a fresh run printed a state override"
run 2 "$BIN" dedup --input "$TMP/b" --output "$TMP/out-b" --state "$TMP/state" --fpr 0.01 \
  --capacity 5000 --slices 64 --overwrite >"$TMP/incr.log" 2>&1 ||
  { cat "$TMP/incr.log" >&2; fail "incremental run"; }
for line in "the state's --fpr 0.001 is used; this job asked for 0.01" \
  "the state's --capacity 30000 is used; this job asked for 5000" \
  "the state's --slices 128 is used; this job asked for 64"; do
  n=$(count "$line" "$TMP/incr.log")
  ((n == 1)) || { cat "$TMP/incr.log" >&2; fail "'$line' printed $n times (expected once)"; }
done
# The same values as the state, or none given: silent.
"$BIN" synth --out "$TMP/c" --manifest "$TMP/c.json" --records 2000 --seed 3 >/dev/null
run 2 "$BIN" dedup --input "$TMP/c" --output "$TMP/out-c" --state "$TMP/state" --fpr 0.001 \
  >"$TMP/same.log" 2>&1 || { cat "$TMP/same.log" >&2; fail "third run"; }
grep -q "is used; this job asked" "$TMP/same.log" &&
  { cat "$TMP/same.log" >&2; fail "an override line for a value equal to the state's"; }
# A resume: a run stopped (exit 3, checkpointed) by a truncated input over
# --max-skipped-inputs 0 goes on with the state's values.
"$BIN" synth --out "$TMP/r" --manifest "$TMP/r.json" --records 20000 --files 2 --compress gz >/dev/null
broken=$(find "$TMP/r" -name 'part-*.gz' | sort | head -n1)
truncate -s $(($(stat -c %s "$broken") / 2)) "$broken"
rc=0
run 2 "$BIN" dedup --input "$TMP/r" --output "$TMP/out-r" --state "$TMP/state-r" \
  --max-skipped-inputs 0 >"$TMP/stopped.log" 2>&1 || rc=$?
((rc == 3)) || { cat "$TMP/stopped.log" >&2; fail "the broken input did not stop the run (exit $rc)"; }
run 2 "$BIN" dedup --input "$TMP/r" --output "$TMP/out-r" --state "$TMP/state-r" \
  --max-skipped-inputs 1 --fpr 0.02 >"$TMP/resumed.log" 2>&1 ||
  { cat "$TMP/resumed.log" >&2; fail "the resume failed"; }
grep -q "resuming checkpoint generation" "$TMP/resumed.log" ||
  { cat "$TMP/resumed.log" >&2; fail "the second run did not resume"; }
n=$(count "the state's --fpr 0.001 is used; this job asked for 0.02" "$TMP/resumed.log")
((n == 1)) || { cat "$TMP/resumed.log" >&2; fail "the resume printed the --fpr override $n times"; }
log "state overrides: one line per given option that differs, none otherwise (incremental and resume)"

# --- merge on a missing path.
rc=0
run 1 "$BIN" merge --from "$TMP/no-such-state" --from "$TMP/state" --into "$TMP/merged" \
  >"$TMP/merge.log" 2>&1 || rc=$?
((rc == 2)) || { cat "$TMP/merge.log" >&2; fail "merge on a missing path exited $rc, expected 2"; }
grep -qF -- "--from '$TMP/no-such-state' does not exist" "$TMP/merge.log" ||
  { cat "$TMP/merge.log" >&2; fail "merge does not say the path does not exist"; }
[[ ! -e $TMP/merged ]] || fail "a refused merge created --into"
rc=0
run 2 "$BIN" verify --state "$TMP/no-such-state" >"$TMP/verify.log" 2>&1 || rc=$?
((rc == 2)) || { cat "$TMP/verify.log" >&2; fail "verify on a missing path exited $rc, expected 2"; }
n=$(count "--state '$TMP/no-such-state' does not exist" "$TMP/verify.log")
((n == 1)) || { cat "$TMP/verify.log" >&2; fail "verify named the missing path $n times on 2 ranks"; }
rc=0
run 2 "$BIN" verify --stat "$TMP/state" >"$TMP/verify.log" 2>&1 || rc=$?
n=$(count "did you mean --state?" "$TMP/verify.log")
((rc == 2 && n == 1)) || { cat "$TMP/verify.log" >&2; fail "verify --stat: exit $rc, $n lines on 2 ranks"; }
log "merge and verify: a missing path is named once (exit 2)"

# --- the paragraph summary.
mkdir -p "$TMP/p"
"$PY" - "$TMP/p/a.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(1000):
        shared = "shared paragraph number %d is long enough to count" % (i % 50)
        paras = [shared] if i % 10 == 0 else [shared, "own paragraph %d with some padding" % i]
        f.write(json.dumps({"id": i, "text": "\n".join(paras)}) + "\n")
PY
run 2 "$BIN" dedup --input "$TMP/p" --output "$TMP/out-p" --unit paragraph --key-field text \
  --drop-if-removed-fraction 0.99 >"$TMP/para.log" 2>&1 || { cat "$TMP/para.log" >&2; fail "paragraph run"; }
"$PY" - "$TMP/para.log" <<'PY' || { cat "$TMP/para.log" >&2; fail "paragraph summary"; }
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"dedup: (\d+) records, (\d+) kept \((\d+) of them cut\), (\d+) dropped \(([\d.]+)%\)", text)
assert m, "no record line of the paragraph form"
records, kept, cut, dropped, pct = int(m[1]), int(m[2]), int(m[3]), int(m[4]), float(m[5])
assert records == 1000 and kept + dropped == records, m[0]
assert dropped == 95, m[0]  # the one-paragraph records after the first 50
assert abs(pct - 100.0 * dropped / records) < 0.006, m[0]
first = text[text.index("dedup: 1000 records"):].splitlines()[0]
assert "duplicates" not in first, "paragraph duplicates on the records line: " + first
p = re.search(r"paragraphs: (\d+) split, (\d+) keyed, (\d+) duplicates \(([\d.]+)% of keyed\)", text)
assert p, "no paragraphs line"
keyed, dups, ppct = int(p[2]), int(p[3]), float(p[4])
assert dups == 950 and keyed == 1900, p[0]
assert abs(ppct - 100.0 * dups / keyed) < 0.006, p[0]
PY
log "paragraph summary: records and paragraphs counted apart"

# --- synth sizes.
"$BIN" synth --out "$TMP/z" --manifest "$TMP/z.json" --records 50000 --dup-rate 0.1 --files 3 \
  --compress gz >"$TMP/synth.log"
"$PY" - "$TMP/synth.log" "$TMP/z.json" "$TMP/z" <<'PY' || { cat "$TMP/synth.log" >&2; fail "synth sizes"; }
import json, os, re, sys
line = open(sys.argv[1]).read()
manifest = json.load(open(sys.argv[2]))
on_disk = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sys.argv[3]) for f in fs
              if f.startswith("part-"))
m = re.search(r"([\d.]+) MB on disk \(jsonl/gz, ([\d.]+) MB uncompressed\)", line)
assert m, "no on-disk and uncompressed sizes: " + line
assert manifest["file_bytes"] == on_disk, (manifest["file_bytes"], on_disk)
assert abs(float(m[1]) - on_disk / 1e6) < 0.006, (m[1], on_disk)
assert abs(float(m[2]) - manifest["bytes"] / 1e6) < 0.006, (m[2], manifest["bytes"])
assert on_disk < manifest["bytes"], "gz files are not smaller than their text"
PY
log "synth: on-disk and uncompressed sizes reported apart"

# --- an agreed error, once: rank 0 cannot create the checkpoint's space
# reservation (a directory sits at its name: the start's sweep of stale
# temporaries removes only files), all 3 ranks agree and abort.
mkdir -p "$TMP/bad-state/.reserve.tmp/occupied"
rc=0
timeout -s KILL 120 "$MPIEXEC" "$NP_FLAG" 3 "$BIN" dedup --input "$TMP/c" --output "$TMP/out-bad" \
  --state "$TMP/bad-state" >"$TMP/bad.log" 2>&1 || rc=$?
((rc == 1)) || { cat "$TMP/bad.log" >&2; fail "the failed checkpoint exited $rc, expected 1"; }
n=$(count "cannot create $TMP/bad-state/.reserve.tmp" "$TMP/bad.log")
((n == 1)) || { cat "$TMP/bad.log" >&2; fail "the agreed error was printed $n times on 3 ranks"; }
grep -q "rank 0 on " "$TMP/bad.log" || { cat "$TMP/bad.log" >&2; fail "the error does not name the failing rank"; }
log "agreed error: one line on 3 ranks"
log PASS
