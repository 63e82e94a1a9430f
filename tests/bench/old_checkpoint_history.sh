#!/usr/bin/env bash
# Per-checkpoint write seconds of a build without checkpoint_history in its
# metrics (the format-1 build): runs it with --keep-generations 1000 and
# reads, for every ckpt-<g>.h5, the file's birth and last-modification times
# (statx; the file is created as .tmp and renamed, so mtime - birth is the
# write) and its tier-2 key count (/tier2/fingerprints' length via h5ls).
# Prints "keys,seconds,bytes" lines (bytes: the file, all of which a
# format-1 checkpoint writes) (tests/bench/plot_checkpoint_cost.py --before-csv).
# usage: old_checkpoint_history.sh OLD_BIN CORPUS WORK [ranks] [dedup options...]
set -euo pipefail
BIN=$1 CORPUS=$2 WORK=$3 RANKS=${4:-2}
shift 4 || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
rm -rf "$WORK/old-out" "$WORK/old-state"
mpiexec -n "$RANKS" "$BIN" dedup --input "$CORPUS" --key-field id --output "$WORK/old-out" \
  --state "$WORK/old-state" --keep-generations 1000 "$@" >"$WORK/old.log" 2>&1
for f in $(ls "$WORK"/old-state/ckpt-*.h5 | sort -V); do
  read -r born mod < <(stat --format='%.9W %.9Y' "$f")
  keys=$(h5ls "$f/tier2/fingerprints" | sed -n 's/.*Dataset {\([0-9]*\).*/\1/p')
  echo "$keys,$(echo "$mod - $born" | bc),$(stat --format=%s "$f")"
done
