#!/usr/bin/env bash
# Same-run A/B pairs of two bloomshard builds on one dedup job (2 ranks):
# one warm-up pair not counted, then PAIRS pairs in alternating order
# (A B, B A, A B, ...: neither build always runs second), each run the whole
# `mpiexec` under /usr/bin/time, its output removed before it and not timed.
# Prints every run (wall, user, sys, peak RSS of the largest process, and
# from --metrics the slower rank's read and route phase seconds), then the
# medians and the median of the per-pair ratios A/B; checks that the last
# pair's outputs are byte-identical. Never a test: figures go to
# docs/performance.md with the machine's load, printed at start and end.
#
# usage: tests/bench/ab_pairs.sh BIN_A BIN_B PAIRS WORKDIR -- DEDUP_ARGS...
#   DEDUP_ARGS must name --input; --output, --metrics and --progress are set here.
# example (docs/performance.md, "Read-ahead"):
#   tests/bench/ab_pairs.sh build/release/bin/bloomshard /tmp/main/bloomshard 5 /tmp/ab -- \
#     --input in --key-field id --capacity 10000000 --fpr 0.001
set -euo pipefail
if [[ $# -lt 5 || $5 != -- ]]; then
  sed -n '2,17p' "$0" >&2
  exit 2
fi
BIN_A=$(realpath "$1") BIN_B=$(realpath "$2") PAIRS=$3 WORK=$4
shift 5
mkdir -p "$WORK"
LOG="$WORK/runs.txt"
: >"$LOG"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "start $(date -u +%FT%TZ) load $(load)"

run() {  # run LABEL PAIR_INDEX
  local label=$1 pair=$2 bin=$BIN_A
  [[ $label == B ]] && bin=$BIN_B
  rm -rf "$WORK/out$label"
  sync
  local t
  /usr/bin/time -o "$WORK/time$label" -f "%e %U %S %M" mpiexec -n 2 "$bin" dedup "${DEDUP[@]}" \
    --output "$WORK/out$label" --metrics "$WORK/m$label.json" --progress 0 \
    >/dev/null 2>"$WORK/err$label" || {
    echo "build $label failed (pair $pair): see $WORK/err$label" >&2
    exit 1
  }
  t=$(tail -1 "$WORK/time$label")
  local phases
  phases=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["phase_seconds_by_rank"]
print(max(p["read"]), max(p["route"]))' "$WORK/m$label.json")
  echo "$pair $label $t $phases" | tee -a "$LOG"
}

DEDUP=("$@")
echo "pair build wall_s user_s sys_s peak_KiB read_s route_s"
for ((i = 0; i <= PAIRS; i++)); do  # pair 0: the warm-up
  if ((i % 2 == 0)); then run A "$i"; run B "$i"; else run B "$i"; run A "$i"; fi
done
echo "end $(date -u +%FT%TZ) load $(load)"
if diff -rq "$WORK/outA" "$WORK/outB" >/dev/null; then
  echo "outputs of the last pair: identical"
else
  echo "outputs of the last pair: DIFFER"
fi
python3 - "$LOG" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "0":
        continue  # warm-up
    runs.setdefault(f[0], {})[f[1]] = {
        "wall": float(f[2]), "cpu": float(f[3]) + float(f[4]), "user": float(f[3]),
        "sys": float(f[4]), "peak_MiB": float(f[5]) / 1024, "read": float(f[6]),
        "route": float(f[7])}
pairs = [r for r in runs.values() if "A" in r and "B" in r]
print(f"{len(pairs)} pairs: median A, median B, median of A/B per pair (min-max)")
for k in ["wall", "cpu", "user", "sys", "peak_MiB", "read", "route"]:
    a = [p["A"][k] for p in pairs]
    b = [p["B"][k] for p in pairs]
    r = [p["A"][k] / p["B"][k] for p in pairs if p["B"][k] > 0]
    print(f"{k:9s} {st.median(a):9.3f} {st.median(b):9.3f}  {st.median(r):.3f} ({min(r):.3f}-{max(r):.3f})")
PY
