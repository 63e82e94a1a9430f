#!/usr/bin/env bash
# Same-run A/B/C of the first copy's cost on one plain corpus, 2 ranks:
# A = BIN_A --kept-copy first, B = BIN_B --kept-copy first (the baseline
# build), C = BIN_A --kept-copy arrival (the issue's yardstick). ROUNDS
# rounds of three runs, the positions rotated (each first equally often),
# round 0 a warm-up; each run the whole `mpiexec` under /usr/bin/time, its
# output removed before it. Prints one line a run (wall, user + system of
# the tree, peak RSS of the largest process, phase seconds and
# end_pass_seconds from --metrics, the load), then the medians of rounds
# 1.. and the pairwise ratios A/C, A/B, B/C (median, min-max). Never a
# test: figures go to docs/inputs.md and docs/performance.md with the load.
#
# With STATE=1 in the environment every run also gets --state WORKDIR/ST
# --checkpoint-every 1 (a checkpoint a second, the state removed before the
# run), as a Slurm job runs; the printed lines then add checkpoints= and
# checkpoint_s= (the checkpoints' seconds) from --metrics.
#
# usage: [STATE=1] tests/bench/kept_copy_abc.sh BIN_A BIN_B CORPUS WORKDIR [ROUNDS]
# example (docs/inputs.md "Cost of the lockstep layout"):
#   tests/bench/kept_copy_abc.sh build/release/bin/bloomshard /tmp/main/bloomshard \
#     /tmp/h3-10m/in /tmp/abc 6
set -euo pipefail
if [[ $# -lt 4 ]]; then
  sed -n '2,22p' "$0" >&2
  exit 2
fi
BIN_A=$(realpath "$1") BIN_B=$(realpath "$2") CORPUS=$3 W=$4 ROUNDS=${5:-6}
mkdir -p "$W"
LOG="$W/runs.txt"
: >"$LOG"
STATE_ARGS=()
[[ ${STATE:-0} != 1 ]] || STATE_ARGS=(--state "$W/ST" --checkpoint-every 1)
one() { # LABEL BIN MODE ROUND
  rm -rf "$W/OUT" "$W/ST"
  /usr/bin/time -f "%e %U %S %M" -o "$W/t.txt" mpiexec -n 2 "$2" dedup --input "$CORPUS" \
    --output "$W/OUT" --key-field id --capacity 10000000 --fpr 0.001 --progress 0 \
    --kept-copy "$3" --metrics "$W/M.json" "${STATE_ARGS[@]}" >/dev/null 2>"$W/err.txt" ||
    { echo "run $1 failed: see $W/err.txt" >&2; exit 1; }
  python3 - "$1" "$4" "$W/t.txt" "$W/M.json" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY' | tee -a "$LOG"
import json, sys
lab, rnd, t, m, load = sys.argv[1:6]
wall, u, s, rss = open(t).read().split()[-4:]
d = json.load(open(m))
p = d["phase_seconds"]
print(f"{rnd} {lab} wall={wall} cpu={float(u) + float(s):.2f} rss_kb={rss} decide={p['decide']:.3f} "
      f"read={p['read']:.3f} route={p['route']:.3f} write={p['write']:.3f} "
      f"end_pass={d['end_pass_seconds']:.3f} layout={d.get('input_layout', '-')} "
      f"checkpoints={d.get('checkpoints', 0)} "
      f"checkpoint_s={d.get('checkpoint_seconds_total', 0):.3f} load={load}")
PY
}
RUNS=("A $BIN_A first" "B $BIN_B first" "C $BIN_A arrival")
for ((r = 0; r < ROUNDS; ++r)); do
  for k in 0 1 2; do
    # shellcheck disable=SC2086
    set -- ${RUNS[$(((k + r) % 3))]}
    one "$1" "$2" "$3" "$r"
  done
done
python3 - "$LOG" <<'PY'
import re, statistics as st, sys
rows, loads = {}, []
for line in open(sys.argv[1]):
    rnd, lab = int(line.split()[0]), line.split()[1]
    if rnd == 0:
        continue
    rows.setdefault(rnd, {})[lab] = dict(re.findall(r"(\w+)=([\w.]+)", line))
    loads.append(float(line.split("load=")[1].split()[0]))
med = lambda lab, k: st.median(float(rows[r][lab][k]) for r in rows)
print(f"load {min(loads):.2f}-{max(loads):.2f}")
for lab in "ABC":
    print(lab, " ".join(f"{k} {med(lab, k):g}" for k in
                        ("wall", "cpu", "decide", "read", "route", "write", "end_pass")),
          f"peak MiB {med(lab, 'rss_kb') / 1024:.1f}")
for a, b in (("A", "C"), ("A", "B"), ("B", "C")):
    for k in ("wall", "cpu"):
        v = sorted(float(rows[r][a][k]) / float(rows[r][b][k]) for r in rows)
        print(f"{a}/{b} {k} {st.median(v):.2f} ({v[0]:.2f}-{v[-1]:.2f})")
PY
