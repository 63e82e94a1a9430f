#!/usr/bin/env bash
# Recreates the inputs of the format-1 fixture under ROOT/in (synth is
# deterministic for a seed) with the fixed mtimes the fixture's run identity
# holds. usage: make_v1_inputs.sh BLOOMSHARD ROOT
set -euo pipefail
BIN=$1 ROOT=$2
MTIME="2026-01-01 00:00:00 UTC"
mkdir -p "$ROOT/meta"
"$BIN" synth --out "$ROOT/in/hist" --manifest "$ROOT/meta/hist.json" --records 3000 \
  --dup-rate 0.3 --files 2 --compress zst --seed 101 >/dev/null
"$BIN" synth --out "$ROOT/in/res" --manifest "$ROOT/meta/res.json" --records 4000 \
  --dup-rate 0.3 --files 3 --seed 102 >/dev/null
"$BIN" synth --out "$ROOT/in/today" --manifest "$ROOT/meta/today.json" --records 2000 \
  --dup-rate 0.3 --files 2 --compress gz --seed 103 >/dev/null
cp "$ROOT/in/hist/part-00000.jsonl.zst" "$ROOT/in/today/recrawl.jsonl.zst"
find "$ROOT/in" -type f -exec touch -d "$MTIME" {} +
