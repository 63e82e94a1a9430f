#!/usr/bin/env bash
# Edges of the input feed that the coverage run found untaken, through the
# real binary on 1 rank (a multi-rank run's counters may be lost:
# docs/coverage.md):
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
#
# usage: feed_coverage_edges.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse feed_coverage_edges.sh "BIN" "$@"
harness_tmp feed-coverage-edges "feed coverage edges, 1 rank"
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
