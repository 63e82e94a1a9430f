#!/usr/bin/env bash
# The input feed's own refusals of a record, through the real binary (the
# key extractor's are tested apart): a tuple key whose fields each fit
# --max-key-bytes but not together, a line longer than --max-line-bytes,
# and a text line that is not valid UTF-8 under --normalize nfc. Each goes
# to the reject file with its reason, file and line; every other record is
# decided as usual, the first copy kept.
#
# usage: feed_rejects.sh BIN [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse feed_rejects.sh "BIN --ranks=RANKS:1" "$@"
harness_tmp feed-rejects "feed rejects, $RANKS ranks"
cd "$TMP" || exit 1

mkdir in
x30=$(printf 'x%.0s' {1..30})
y32=$(printf 'y%.0s' {1..32})
q600=$(printf 'q%.0s' {1..600})
{
  printf '{"a":"%s","b":"%s"}\n' "$x30" "$y32" # 30 + 32 bytes: each fits 40, the tuple not
  printf '{"a":"ok","b":"fine"}\n'
  printf '{"a":"%s","b":"w"}\n' "$q600" # a line of 616 bytes
  printf '{"a":"ok","b":"fine"}\n'      # a duplicate of line 2
} >in/j.jsonl
printf 'good line\nbad \xff\xfe line\nother\ngood line\n' >in/t.txt

timeout 120 "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input in --output out \
  --key-field a --key-field b --max-key-bytes 40 --max-line-bytes 256 --normalize nfc \
  --max-reject-fraction 1 >run.log 2>&1 || { cat run.log >&2; fail "dedup exited $?, want 0"; }
grep -q "8 records, 3 kept, 2 duplicates" run.log || { cat run.log >&2; fail "wrong counts"; }

cat out/_rejects/*.jsonl | "$PY" -c '
import json, sys
got = sorted((r["file"].rsplit("/", 1)[-1], r["line"], r["reason"]) for r in map(json.loads, sys.stdin))
want = sorted([("j.jsonl", 1, "key too long"), ("j.jsonl", 3, "line too long"),
               ("t.txt", 2, "invalid UTF-8 for normalization")])
assert got == want, "rejects %s, want %s" % (got, want)
' || fail "the reject file does not hold the three refusals"
[[ $(cat out/j.jsonl) == '{"a":"ok","b":"fine"}' ]] || fail "out/j.jsonl: $(cat out/j.jsonl)"
[[ $(cat out/t.txt) == $'good line\nother' ]] || fail "out/t.txt: $(cat out/t.txt)"
log "ok"
