#!/usr/bin/env bash
# Big single files, a benchmark, not a test. One plain JSONL file
# of about --gb GB from `bloomshard synth` (one file, duplicates spread over
# the whole file) is deduplicated
#   1  on 1 rank with --split-inputs off (the reference),
#   N  on each of --ranks (default "2 4"), first with --split-inputs off (one
#      rank reads the file: the time splitting saves), then with the default
#      --split-inputs auto (and --split-min-bytes, default 64 MiB),
# and for each split run prints: wall seconds (and the join's), the ranges the file was cut into,
# read_bytes_by_rank with max/min, and the comparison with the 1-rank run:
# kept records equal to the synth manifest's unique keys, the kept key set
# equal (ids extracted from the outputs, sorted, hashed), rejects equal,
# and whether the output bytes are identical (they are only when no key
# repeats across ranges with the later copy decided first; with --dup-rate
# 0 they must be). Exit 1 if a correctness check or the 1.25x balance fails.
#
# usage: tests/bench/split_benchmark.sh --bin BLOOMSHARD [--gb 1] [--ranks "2 4"]
#          [--dup-rate 0.3] [--split-min-bytes 67108864] [--work DIR]
set -euo pipefail
BIN="" GB=1 RANKS_LIST="2 4" DUP=0.3 MIN=$((64 << 20)) WORK=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --gb) GB=$2; shift 2 ;;
    --ranks) RANKS_LIST=$2; shift 2 ;;
    --dup-rate) DUP=$2; shift 2 ;;
    --split-min-bytes) MIN=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $BIN ]] || { echo "need --bin" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
WORK=${WORK:-$(mktemp -d /tmp/bloomshard-split-bench.XXXXXX)}
mkdir -p "$WORK"
PY=/usr/bin/python3
# synth writes ~175 bytes per record on average.
RECORDS=$("$PY" -c "print(int($GB * 1e9 / 175))")
IN=$WORK/in
if [[ ! -f $WORK/synth.json ]]; then
  rm -rf "$IN" "$WORK/gen"
  "$BIN" synth --out "$WORK/gen" --manifest "$WORK/synth.json" --records "$RECORDS" \
    --dup-rate "$DUP" --files 1 --seed 12 >/dev/null
  mkdir -p "$IN"
  mv "$WORK/gen/part-00000.jsonl" "$IN/big.jsonl"
fi
SIZE=$(stat -c %s "$IN/big.jsonl")
UNIQUE=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["unique_keys"])' "$WORK/synth.json")
echo "corpus: $IN/big.jsonl, $SIZE bytes, $UNIQUE unique keys (dup rate $DUP)"
cat "$IN/big.jsonl" >/dev/null # warm the page cache

run() { # NAME RANKS options...: wall seconds into WALL
  local name=$1 n=$2
  shift 2
  rm -rf "$WORK/$name"
  local t0 t1
  t0=$(date +%s.%N)
  mpiexec -n "$n" "$BIN" dedup --input "$IN" --output "$WORK/$name" --key-field id \
    --metrics "$WORK/$name.metrics.json" "$@" >"$WORK/$name.log" 2>&1 ||
    { cat "$WORK/$name.log" >&2; echo "FAIL: $name exited non-zero" >&2; exit 1; }
  t1=$(date +%s.%N)
  WALL=$("$PY" -c "print(f'{$t1 - $t0:.2f}')")
}

keyset() { # OUT: sha256 of the sorted kept ids, and their count
  grep -o '^{"id":"[^"]*"' "$1/big.jsonl" | LC_ALL=C sort | sha256sum | cut -c1-16
}

status=0
run one 1 --split-inputs off
REF_KEYS=$(keyset "$WORK/one")
REF_KEPT=$(wc -l <"$WORK/one/big.jsonl")
echo "1 rank, --split-inputs off: ${WALL} s, kept $REF_KEPT (want $UNIQUE), key set $REF_KEYS"
((REF_KEPT == UNIQUE)) || { echo "FAIL: the 1-rank run kept $REF_KEPT, not $UNIQUE"; status=1; }
for n in $RANKS_LIST; do
  run "off$n" "$n" --split-inputs off
  off_balance=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["read_bytes_by_rank"])' \
    "$WORK/off$n.metrics.json")
  echo "$n ranks, --split-inputs off: ${WALL} s, read_bytes_by_rank $off_balance"
  run "r$n" "$n" --split-min-bytes "$MIN"
  join=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["join_seconds"])' "$WORK/r$n.metrics.json")
  ranges=$(grep -o 'into [0-9]* line-aligned ranges' "$WORK/r$n.log" | grep -o '[0-9]*' || echo 1)
  balance=$("$PY" - "$WORK/r$n.metrics.json" <<'PYEOF'
import json, sys
b = json.load(open(sys.argv[1]))["read_bytes_by_rank"]
print(f"{b} max/min {max(b) / max(1, min(b)):.3f}")
PYEOF
)
  kept=$(wc -l <"$WORK/r$n/big.jsonl")
  keys=$(keyset "$WORK/r$n")
  same_bytes=no
  cmp -s "$WORK/one/big.jsonl" "$WORK/r$n/big.jsonl" && same_bytes=yes
  echo "$n ranks: ${WALL} s (join ${join} s), $ranges ranges, read_bytes_by_rank $balance, kept $kept, key set $keys" \
    "($([[ $keys == "$REF_KEYS" ]] && echo equal || echo DIFFERENT)), output bytes identical to 1 rank: $same_bytes"
  [[ $keys == "$REF_KEYS" && $kept == "$REF_KEPT" ]] || { echo "FAIL: kept keys differ"; status=1; }
  ratio=${balance##* }
  "$PY" -c "import sys; sys.exit(0 if $ratio <= 1.25 else 1)" || { echo "FAIL: read bytes over 1.25x"; status=1; }
  if [[ $DUP == 0 && $same_bytes == no ]]; then echo "FAIL: unique keys, yet bytes differ"; status=1; fi
done
exit $status
