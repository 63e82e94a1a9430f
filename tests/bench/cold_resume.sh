#!/usr/bin/env bash
# Cold load of a checkpoint generation vs a cold sequential read of the files
# it references (the target: cold resume <= 1.5x cold read), a benchmark, not a
# test. "Cold": the files' pages are evicted first (posix_fadvise DONTNEED
# on exactly those files, so other work's page cache is left alone). The
# load is `bloomshard verify` of LATEST at R ranks: what a resume's
# load_checkpoint does (open, index, map, every checksum of Bloom and runs
# checked through the mapping). Alternates the two, REPS times; medians.
# usage: tests/bench/cold_resume.sh BLOOMSHARD STATE_DIR [ranks 2] [reps 3]
# Also times the launch alone (LAUNCH_PROBE, default the build's
# bloomshard_comm_tests) and prints the ratio with and without it.
set -euo pipefail
BIN=$1 STATE=$2 RANKS=${3:-2} REPS=${4:-3}
LAUNCH_PROBE=${LAUNCH_PROBE:-$(dirname "$BIN")/../tests/comm/bloomshard_comm_tests}
[[ -x $LAUNCH_PROBE ]] || { echo "set LAUNCH_PROBE to an MPI program that starts and ends (bloomshard_comm_tests)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
G=$(cat "$STATE/LATEST")
mapfile -t FILES < <("$BIN" info --json --state "$STATE" | /usr/bin/python3 -c '
import json, os, sys
i = json.load(sys.stdin); d = os.path.dirname(i["file"])
print(i["file"])
for r in i["runs"]:
    p = os.path.join(d, r["file"])
    if p != i["file"]: print(p)')
BYTES=$(du -cb "${FILES[@]}" | tail -1 | cut -f1)
evict() { /usr/bin/python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "${FILES[@]}"; }
now() { date +%s.%N; }
declare -a V C L
for ((i = 0; i < REPS; i++)); do
  # The launcher's own cost (mpiexec + MPI_Init + MPI_Finalize, no state
  # touched: the MPI unit-test binary running no test): constant per job,
  # so it is reported apart from the load.
  t0=$(now)
  mpiexec -n "$RANKS" "$LAUNCH_PROBE" --gtest_filter=NONE >/dev/null
  t1=$(now); L+=("$(echo "$t1 - $t0" | bc)")
  evict; t0=$(now)
  mpiexec -n "$RANKS" "$BIN" verify --state "$STATE" >/dev/null
  t1=$(now); V+=("$(echo "$t1 - $t0" | bc)")
  evict; t0=$(now)
  cat "${FILES[@]}" >/dev/null
  t1=$(now); C+=("$(echo "$t1 - $t0" | bc)")
  echo "rep $i: cold load (verify, $RANKS ranks) ${V[i]} s, cold cat ${C[i]} s; load $(cut -d' ' -f1 /proc/loadavg)"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mV=$(median "${V[@]}") mC=$(median "${C[@]}") mL=$(median "${L[@]}")
echo "generation $G: ${#FILES[@]} files, $((BYTES >> 20)) MiB; median cold load $mV s, cold cat $mC s, ratio $(echo "scale=2; $mV / $mC" | bc)"
echo "launch alone (mpiexec -n $RANKS $(basename "$LAUNCH_PROBE") running no test) $mL s; load without it $(echo "scale=3; $mV - $mL" | bc) s, ratio $(echo "scale=2; ($mV - $mL) / $mC" | bc)"
