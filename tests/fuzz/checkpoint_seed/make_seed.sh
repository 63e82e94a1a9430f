#!/usr/bin/env bash
# Makes the seed state of fuzz_checkpoint_loader (this directory): a tiny
# format-2 state (4 slices, first layer for 8 keys, so the filter grows to
# several layers; a checkpoint every round of 4 KiB of input, so the
# generation lists several tier-2 runs) and keys.txt, every key it holds.
# Run once with a bloomshard binary; the files are checked in.
# usage: make_seed.sh BLOOMSHARD_BINARY
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$WORK/in"
for i in $(seq 1 1200); do echo "key-$i"; echo "key-$((i / 2))"; done >"$WORK/in/keys.txt"
"$BIN" dedup --input "$WORK/in" --output "$WORK/out" --state "$WORK/state" --slices 4 \
  --capacity 8 --batch-bytes 4096 --checkpoint-rounds 1 --keep-generations 1 \
  --compaction-fanout 100 --max-runs 100 >/dev/null
rm -f "$HERE"/*.h5
cp "$WORK"/state/ckpt-*.h5 "$WORK"/state/run-*.h5 "$HERE/"
sort -u "$WORK/in/keys.txt" >"$HERE/keys.txt"
ls -l "$HERE"
