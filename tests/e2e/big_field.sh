#!/usr/bin/env bash
# A 100 MB text field is keyed by its digest with bounded memory:
# three records, the second the first's text with other whitespace (CRLF,
# tabs, NBSP), so --text-normalize ws --key-digest sha256 keeps records 1 and
# 3 and drops 2, and --key-digest xxh3-128 (text none) keeps all three; the
# kept output must be those input lines byte for byte, and the peak RSS of
# the rank (metrics max_rss_bytes) stays under RSS_LIMIT_MB (default 200:
# measured 143 MB: the 30 MB of a job on a tiny input plus 1.1x the line;
# an earlier build took 671 MB, see docs/keys.md). Without a
# digest the same field is a "key too long" reject.
#
# usage: big_field.sh BLOOMSHARD [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse big_field.sh "BIN" "$@"
FIELD_MB=${FIELD_MB:-100}
RSS_LIMIT_MB=${RSS_LIMIT_MB:-200}
harness_tmp big-field "big field"

mkdir -p "$TMP/in" "$TMP/want"
"$PY" - "$TMP/want/big.jsonl" "$FIELD_MB" <<'PYEOF'
import json, sys
path, mb = sys.argv[1], int(sys.argv[2])
words = "lorem ipsum dolor sit amet consectetur adipiscing elit".split()
n = mb * 1000 * 1000
unit = " ".join(words) + " "
one = unit * (n // len(unit) + 1)
one = one[:n]
# The same words with other White_Space between them: one key under ws.
two = one.replace(" ", "\r\n\t\u00a0", 1).replace("sit amet", "sit\t\tamet")
lines = [(json.dumps({"id": rid, "text": text}, ensure_ascii=False) + "\n").encode()
         for rid, text in (("one", one), ("two", two), ("three", "a small record"))]
with open(path, "wb") as f:
    f.writelines(lines)
# What ws + a digest keeps: lines 1 and 3 (the oracle for the outputs).
with open(path + ".want-1,3", "wb") as f:
    f.writelines([lines[0], lines[2]])
PYEOF
mv "$TMP/want/big.jsonl" "$TMP/in/big.jsonl"
log "input: $(stat -c %s "$TMP/in/big.jsonl") bytes, three records"

# run NAME KEPT_LINE_NUMBERS DEDUP_OPTIONS...: one dedup, then its checks.
run() {
  local name=$1 kept=$2
  shift 2
  "$BIN" dedup --input "$TMP/in" --output "$TMP/out-$name" --metrics "$TMP/m-$name.json" \
    --key-field text --max-line-bytes $((FIELD_MB * 2 * 1000 * 1000)) "$@" \
    >"$TMP/log-$name" 2>&1 || { cat "$TMP/log-$name" >&2; fail "dedup $name failed"; }
  local want=$TMP/in/big.jsonl
  [[ $kept == 1,2,3 ]] || want=$TMP/want/big.jsonl.want-$kept
  cmp -s "$want" "$TMP/out-$name/big.jsonl" || fail "$name: the output is not input lines $kept byte for byte"
  "$PY" - "$TMP/m-$name.json" "$RSS_LIMIT_MB" "$kept" "$name" <<'PYEOF' || fail "$name: see above"
import json, sys
metrics, limit, kept, name = sys.argv[1:5]
m = json.load(open(metrics))
flat = {}
def walk(d):
    for k, v in d.items():
        walk(v) if isinstance(v, dict) else flat.setdefault(k, v)
walk(m)
rss_mb = flat["max_rss_bytes"] / 1e6
print(f"[big field] {name}: kept lines {kept} (byte for byte), rejected {flat['rejected']}, "
      f"peak RSS {rss_mb:.0f} MB (limit {limit} MB)")
if flat["rejected"] != 0:
    sys.exit(f"{name}: a record was rejected")
if rss_mb > int(limit):
    sys.exit(f"{name}: peak RSS {rss_mb:.0f} MB over the {limit} MB bound")
PYEOF
}
run ws-sha256 1,3 --text-normalize ws --key-digest sha256
run xxh3 1,2,3 --key-digest xxh3-128

# Without a digest the field is over --max-key-bytes: a reject, not a crash.
"$BIN" dedup --input "$TMP/in" --output "$TMP/out-full" --metrics "$TMP/m2.json" \
  --key-field text --max-line-bytes $((FIELD_MB * 2 * 1000 * 1000)) --max-reject-fraction 1 \
  >"$TMP/log2" 2>&1 || { cat "$TMP/log2" >&2; fail "dedup without a digest failed"; }
rejects=$(cat "$TMP/out-full/_rejects/"*.jsonl)
[[ $rejects == *'"reason":"key too long"'* ]] || fail "no 'key too long' reject without a digest"
log PASS
