#!/usr/bin/env bash
# Edges of the input feed that the coverage run found untaken, through the
# real binary on 1 rank (a multi-rank refusal's counters may be lost:
# docs/coverage.md), but for one case on 2:
#   dolma    --annotate-format dolma over a plain-text input (no "id": null;
#            the span covers the line, in code points) and over JSON lines
#            without a "text" field (a duplicate's span is [0,0])
#   para     --unit paragraph over a plain-text input: a line is one
#            paragraph; a repeated line is cut to an empty line, not dropped
#            (the default --drop-if-removed-fraction keeps the record)
#   digest   a tuple key under --key-digest: its 16-byte digest and its
#            fields (62 bytes together) all pass --max-key-bytes 8, and it
#            is kept, not rejected (the limit is for raw keys only)
#   level    --gzip-level reaches a .gz input's mirrored output: levels 1
#            and 12 give outputs of different sizes, both the kept records
#   order    --kept-copy first over plain-text inputs with CRLF lines on 2
#            ranks: the later input's copy reaches its owner first and is
#            retracted from its output (its key re-derived from the written
#            line, without its "\r\n"); the outputs are the 1-rank run's
#            (this case alone runs 2 ranks: a run that ends normally writes
#            its counters); the same with JSON lines whose shared id is a
#            1.1 MiB string under --key-digest (its key digested as a stream
#            from the escaped bytes, when read and when re-derived)
#   stop     a split input on 2 ranks stopped (SIGUSR1) while its later
#            range, whose first records hold two rejects, is still read: the
#            stop's checkpoint counts those rejects, and the resumed run's
#            metrics name each once
#   edited   a .gz input that broke (--on-input-error fail: checkpointed at
#            its last good record), then damaged before that record under the
#            same size and mtime, past the first window: the resume cannot
#            re-read up to the cursor and skips the input from the saved
#            cursor (record and byte named), the records kept before stay
#
# usage: feed_coverage_edges.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse feed_coverage_edges.sh "BIN" "$@"
harness_tmp feed-coverage-edges "feed coverage edges"
cd "$TMP" || exit 1

# run LOG ARGS...: `BIN dedup --progress 0 ARGS` on 1 rank, exit 0 wanted.
run() {
  local log=$1 rc=0
  shift
  timeout 120 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" dedup --progress 0 "$@" >"$log" 2>&1 || rc=$?
  ((rc == 0)) || { cat "$log" >&2; fail "dedup $* exited $rc, want 0"; }
}

# want FILE TEXT: FILE holds exactly TEXT (and its final newline).
want() {
  local got
  got=$(cat "$1")
  [[ $got == "$2" ]] || fail "$1 holds:"$'\n'"$got"$'\n'"want:"$'\n'"$2"
}

mkdir dolma
printf 'h\xc3\xa9llo w\xc3\xb6rld\nplain two\nh\xc3\xa9llo w\xc3\xb6rld\n' >dolma/t.txt
printf '{"id":"d1","text":"ab"}\n{"id":"d1","body":"x"}\n{"id":"d2"}\n' >dolma/j.jsonl
run dolma.log --input dolma --output dolma-out --key-field id --mode annotate \
  --annotate-format dolma
want dolma-out/t.txt '{"id":null,"attributes":{"bloomshard_duplicate":[]}}
{"id":null,"attributes":{"bloomshard_duplicate":[]}}
{"id":null,"attributes":{"bloomshard_duplicate":[[0,11,1.0]]}}'
want dolma-out/j.jsonl '{"id":"d1","attributes":{"bloomshard_duplicate":[]}}
{"id":"d1","attributes":{"bloomshard_duplicate":[[0,0,1.0]]}}
{"id":"d2","attributes":{"bloomshard_duplicate":[]}}'
log "dolma: ok"

mkdir para
printf 'first paragraph here\nsecond one\nfirst paragraph here\nthird\n' >para/p.txt
run para.log --input para --output para-out --key-field text --unit paragraph
want para-out/p.txt $'first paragraph here\nsecond one\n\nthird'
grep -q "1 removed (20 bytes) from 1 changed records; 0 records dropped" para.log ||
  { cat para.log >&2; fail "para: wrong paragraph counts"; }
log "para: ok"

mkdir digest
x30=$(printf 'x%.0s' {1..30})
y32=$(printf 'y%.0s' {1..32})
{
  printf '{"a":"%s","b":"%s"}\n' "$x30" "$y32" # 62 bytes of fields, past 8
  printf '{"a":"ok","b":"fine"}\n'
  printf '{"a":"%s","b":"%s"}\n' "$x30" "$y32" # a duplicate of line 1
} >digest/j.jsonl
run digest.log --input digest --output digest-out --key-field a --key-field b \
  --max-key-bytes 8 --key-digest xxh3-128
grep -q "3 records, 2 kept, 1 duplicates" digest.log ||
  { cat digest.log >&2; fail "digest: wrong counts"; }
want digest-out/j.jsonl "$(head -2 digest/j.jsonl)"
[[ ! -s digest-out/_rejects/rank-0.jsonl ]] || fail "digest: a reject: $(cat digest-out/_rejects/*)"
log "digest: ok"

mkdir level
"$PY" -c '
import random
r = random.Random(7)
w = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
for i in range(3000):
    print("{\"id\":%d,\"t\":\"%s\"}" % (i, " ".join(r.choice(w) for _ in range(12))))
' | gzip -1 >level/g.jsonl.gz
for l in 1 12; do run "level$l.log" --input level --output "level-$l" --key-field id --gzip-level "$l"; done
s1=$(stat -c %s level-1/g.jsonl.gz)
s12=$(stat -c %s level-12/g.jsonl.gz)
((s12 < s1)) || fail "level: --gzip-level 12 wrote $s12 bytes, level 1 $s1: the level did not reach the output"
for l in 1 12; do
  cmp -s <(gzip -dc "level-$l/g.jsonl.gz") <(gzip -dc level/g.jsonl.gz) ||
    fail "level: level-$l/g.jsonl.gz is not the input's records"
done
log "level: ok ($s1 and $s12 bytes)"

mkdir edited
"$PY" -c '
import random
r = random.Random(11)
for i in range(3000):
    print("{\"id\":%d,\"t\":\"%s\"}" % (i, "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(40))))
' | gzip -6 >edited.gz
size=$(stat -c %s edited.gz)
head -c $((size * 4 / 5)) edited.gz >edited/a.jsonl.gz # cut: the input breaks there
args=(--input edited --output edited-out --state edited-state --key-field id)
rc=0
timeout 120 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" dedup --progress 0 "${args[@]}" --on-input-error fail \
  >edited1.log 2>&1 || rc=$?
((rc == 1)) || { cat edited1.log >&2; fail "edited: the cut input gave exit $rc, want 1"; }
kept=$(gzip -dc edited-out/a.jsonl.gz | wc -l)
bytes=$(gzip -dc edited-out/a.jsonl.gz | wc -c)
((kept > 1000)) || fail "edited: only $kept records kept before the cut"
touch -r edited/a.jsonl.gz edited.stamp
"$PY" -c '
import sys
with open(sys.argv[1], "r+b") as f:  # 256 bytes of 0xff at 25%: past the 4 KiB window
    f.seek(int(sys.argv[2]) // 4)
    f.write(b"\xff" * 256)
' edited/a.jsonl.gz "$size"
touch -r edited.stamp edited/a.jsonl.gz # the same size and mtime
run edited2.log "${args[@]}"
grep -qF "'a.jsonl.gz' from record $((kept + 1)) (decompressed byte $bytes): corrupt gzip data" \
  edited2.log || { cat edited2.log >&2; fail "edited: the skip does not name the saved cursor"; }
[[ $(gzip -dc edited-out/a.jsonl.gz | wc -l) == "$kept" ]] || fail "edited: the output changed"
log "edited: ok (skipped from record $((kept + 1)))"

# order_case DIR EXT ARGS...: DIR (a.EXT and b.EXT, the shared record last
# in a, first in b) on 1 and 2 ranks with --kept-copy first: the same
# outputs, the shared record kept in a only.
order_case() {
  local dir=$1 ext=$2 rc=0
  shift 2
  run "$dir-1.log" --input "$dir" --output "$dir-1" --kept-copy first --batch-bytes 4096 "$@"
  timeout 120 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup --progress 0 --input "$dir" \
    --output "$dir-2" --kept-copy first --batch-bytes 4096 "$@" >"$dir-2.log" 2>&1 || rc=$?
  ((rc == 0)) || { cat "$dir-2.log" >&2; fail "$dir: 2 ranks exited $rc, want 0"; }
  grep -q "4002 records, 4001 kept, 1 duplicates" "$dir-2.log" ||
    { cat "$dir-2.log" >&2; fail "$dir: wrong counts"; }
  { cmp -s "$dir-1/a.$ext" "$dir-2/a.$ext" && cmp -s "$dir-1/b.$ext" "$dir-2/b.$ext"; } ||
    fail "$dir: the 2-rank outputs are not the 1-rank run's"
  [[ $(grep -c shared "$dir-2/a.$ext") == 1 && $(grep -c shared "$dir-2/b.$ext") == 0 ]] ||
    fail "$dir: the kept copy is not the first in input order"
  log "$dir: ok"
}

mkdir order-txt order-jsonl
"$PY" -c '
with open("order-txt/a.txt", "w", newline="") as f:
    for i in range(2000):
        f.write("line a %d padding padding padding\r\n" % i)
    f.write("shared line\r\n")  # the first copy, read late in its input
with open("order-txt/b.txt", "w", newline="") as f:
    f.write("shared line\r\n")  # a later copy, read in the first round
    for i in range(2000):
        f.write("line b %d padding padding padding\r\n" % i)
shared = "{\"id\":\"shared-" + "s" * (1100 * 1024) + "\"}\n"  # a line past 1 MiB
with open("order-jsonl/a.jsonl", "w") as f:
    for i in range(2000):
        f.write("{\"id\":\"a%d\",\"pad\":\"padding padding\"}\n" % i)
    f.write(shared)
with open("order-jsonl/b.jsonl", "w") as f:
    f.write(shared)
    for i in range(2000):
        f.write("{\"id\":\"b%d\",\"pad\":\"padding padding\"}\n" % i)
'
order_case order-txt txt
grep -q $'^shared line\r$' order-txt-2/a.txt || fail "order-txt: the kept line lost its CRLF"
order_case order-jsonl jsonl --key-field id --key-digest xxh3-128 --max-line-bytes 4194304

mkdir stop
"$PY" -c '
with open("stop/b.jsonl", "w") as f:
    for i in range(40000):  # split in two ranges at line 20085: the rejects in the second
        f.write("not json %d\n" % i if i in (20100, 20101) else
                "{\"id\":\"k%d\",\"pad\":\"%s\"}\n" % (i, "x" * 40))
'
args=(--input stop --output stop-out --state stop-state --key-field id --max-reject-fraction 1
  --split-min-bytes 400000)
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup --progress 0 "${args[@]}" --batch-bytes 4096 \
  --checkpoint-rounds 1 >stop1.log 2>&1 &
job=$!
for ((i = 0; i < 600; i++)); do
  [[ -e stop-state/LATEST ]] && break
  sleep 0.05
done
kill -USR1 "$job" 2>/dev/null || true # mpiexec forwards it to the ranks
rc=0
wait "$job" || rc=$?
((rc == 75)) || { cat stop1.log >&2; fail "stop: exit $rc, want 75 (stopped mid-range)"; }
run stop2.log "${args[@]}" --metrics stop-metrics.json # one round, on 1 rank
"$PY" -c '
import json, sys
m = json.load(open("stop-metrics.json"))
got = (m["records"], m["rejected"], m["rejected_by_reason"])
assert got == (40000, 2, {"malformed JSON": 2}), got
' || fail "stop: the resumed run's metrics do not count the two rejects once"
[[ $(cat stop-out/_rejects/*.jsonl | wc -l) == 2 ]] || fail "stop: the reject files do not hold the two rejects"
log "stop: ok"
