#!/usr/bin/env bash
# Checkpoint overhead and write amplification, a benchmark, not a
# test. On one synthetic corpus at R ranks, alternating in each repetition:
#   A  dedup without --state
#   B  dedup --state --checkpoint-every 1 (a fresh state each time)
#   O  as B with an older binary (--old-bin, e.g. the format-1 build), optional
# Prints every wall time, the medians, B/A (and O/A), and from the last B run:
# checkpoints, checkpoint_bytes_written, compaction_bytes_written, and the
# write amplification checkpoint_bytes_written / (final run files + final
# generation file).
#
# usage: tests/bench/checkpoint_overhead.sh --bin BLOOMSHARD [--old-bin OLD]
#          [--records 10000000] [--ranks 2] [--reps 3] [--work DIR] [--every 1]
#          [--old-reps 1]   (O runs only in the first N repetitions: it is slow)
# The metrics of the last B and O runs stay in WORK/m-B.json, WORK/m-O.json
# (their checkpoint_history feeds tests/bench/plot_checkpoint_cost.py).
set -euo pipefail
BIN="" OLD="" RECORDS=10000000 RANKS=2 REPS=3 WORK="" EVERY=1 OLD_REPS=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --old-bin) OLD=$2; shift 2 ;;
    --records) RECORDS=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --every) EVERY=$2; shift 2 ;;
    --old-reps) OLD_REPS=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $BIN ]] || { echo "need --bin" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
WORK=${WORK:-$(mktemp -d /tmp/bloomshard-ckpt-overhead.XXXXXX)}
mkdir -p "$WORK"
CORPUS=$WORK/corpus
[[ -f $CORPUS/_SYNTH.json ]] ||
  "$BIN" synth --records "$RECORDS" --dup-rate 0.3 --files 8 --out "$CORPUS" --seed 7 >/dev/null
cat "$CORPUS"/*.jsonl "$CORPUS"/nested/*.jsonl >/dev/null 2>&1 || true  # warm the page cache
ARGS=(--input "$CORPUS" --key-field id --capacity "$RECORDS" --fpr 0.001)
now() { date +%s.%N; }
run() { # NAME BIN extra...
  local name=$1 bin=$2
  shift 2
  rm -rf "$WORK/out-$name" "$WORK/state-$name"
  local t0 t1
  t0=$(now)
  mpiexec -n "$RANKS" "$bin" dedup "${ARGS[@]}" --output "$WORK/out-$name" \
    --metrics "$WORK/m-$name.json" "$@" >"$WORK/log-$name" 2>&1
  t1=$(now)
  echo "$t1 - $t0" | bc
}
declare -a A B O
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
for ((i = 0; i < REPS; i++)); do
  A+=("$(run A "$BIN")")
  B+=("$(run B "$BIN" --state "$WORK/state-B" --checkpoint-every "$EVERY")")
  if [[ -n $OLD ]] && ((i < OLD_REPS)); then
    O+=("$(run O "$OLD" --state "$WORK/state-O" --checkpoint-every "$EVERY")")
  fi
  echo "rep $i: A ${A[i]} s, B ${B[i]} s${O[i]:+, O ${O[i]} s}; load $(cut -d' ' -f1 /proc/loadavg)"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mA=$(median "${A[@]}") mB=$(median "${B[@]}")
echo "median A (no --state) $mA s, B (--state --checkpoint-every $EVERY) $mB s, B/A $(echo "scale=3; $mB / $mA" | bc)"
if [[ -n $OLD ]]; then
  mO=$(median "${O[@]}")
  echo "median O (old binary, same as B) $mO s, O/A $(echo "scale=3; $mO / $mA" | bc)"
fi
"$BIN" info --json --state "$WORK/state-B" >"$WORK/info-B.json"
/usr/bin/python3 - "$WORK/m-B.json" "$WORK/info-B.json" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1])); info = json.load(open(sys.argv[2]))
final = info["run_file_bytes"] + os.path.getsize(info["file"])
wa = m["checkpoint_bytes_written"] / final
print(f"B: {m['checkpoints']} checkpoints, {m['checkpoint_seconds_total']:.2f} s in checkpoints, "
      f"checkpoint_bytes_written {m['checkpoint_bytes_written']/2**20:.1f} MiB "
      f"(compaction {m['compaction_bytes_written']/2**20:.1f} MiB), final state "
      f"{final/2**20:.1f} MiB ({info['run_count']} runs): write amplification {wa:.2f}")
for h in m["checkpoint_history"]:
    print(f"  g{h['generation']}: {h['seconds']:.2f} s, {h['bytes_written']/2**20:.1f} MiB, "
          f"{h['tier2_keys']} keys, {h['runs']} runs, merged {h['merged_runs']}")
PY
