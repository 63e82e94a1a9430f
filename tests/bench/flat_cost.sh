#!/usr/bin/env bash
# Flat checkpoint cost, a benchmark, not a test: a build-up of
# KEYS keys in CHECKPOINTS equal deltas at R ranks (ckpt_bench buildup: each
# delta decided into the set, then a checkpoint and a re-base, as the dedup
# job does; the last one ends the segment like the job's last checkpoint:
# cap-only compaction, no re-base), one line per checkpoint; then the ratios
# the target is stated in, the compacting checkpoints (the worst case)
# and a PNG of seconds vs history size (compacting checkpoints marked).
# usage: tests/bench/flat_cost.sh BUILD_DIR [keys 100000000] [checkpoints 20]
#          [ranks 2] [work dir] [png docs/checkpoint-buildup.png]
# BUILD_DIR must have bloomshard_ckpt_bench built:
#   cmake --build build/release --target bloomshard_ckpt_bench
set -euo pipefail
BUILD=$1 KEYS=${2:-100000000} N=${3:-20} RANKS=${4:-2}
WORK=${5:-$(mktemp -d /tmp/bloomshard-flat.XXXXXX)} PNG=${6:-docs/checkpoint-buildup.png}
BENCH=$BUILD/tests/io_mpi/bloomshard_ckpt_bench
[[ -x $BENCH ]] || { echo "no $BENCH (build target bloomshard_ckpt_bench)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
rm -rf "$WORK/state"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $KEYS keys, $N checkpoints, $RANKS ranks"
mpiexec -n "$RANKS" "$BENCH" buildup "$KEYS" "$WORK/state" "$N" | tee "$WORK/buildup.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$WORK/buildup.txt" "$PNG" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l[:1].isdigit()]
g = [(int(r[0]), int(r[1]), float(r[2]), int(r[3]), int(r[4]), int(r[5])) for r in rows]
plain = [x for x in g if x[5] == 0]
first, last = g[0][2], g[-1][2]
print(f"first checkpoint {first:.3f} s, last {last:.3f} s: last/first {last / first:.2f}"
      f" (last absorbed {g[-1][5]} runs)")
if len(plain) > 1:
    print(f"checkpoints that absorb no run: first {plain[0][2]:.3f} s, last {plain[-1][2]:.3f} s,"
          f" last/first {plain[-1][2] / plain[0][2]:.2f}, median {statistics.median(x[2] for x in plain):.3f} s")
for x in g:
    if x[5] > 0:
        print(f"  compacting g{x[0]}: {x[2]:.3f} s, {x[3] / 1e9:.2f} GB written, absorbed {x[5]} runs,"
              f" {x[4]} runs after")
total = sum(x[2] for x in g)
print(f"all {len(g)} checkpoints: {total:.1f} s, {total / len(g):.3f} s each on average"
      f" ({total / len(g) / first:.2f}x the first); bytes written {sum(x[3] for x in g) / 1e9:.2f} GB;"
      f" most runs {max(x[4] for x in g)}")
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot([x[1] / 1e6 for x in plain], [x[2] for x in plain], "o-", label="checkpoint (delta only)")
comp = [x for x in g if x[5] > 0]
ax.plot([x[1] / 1e6 for x in comp], [x[2] for x in comp], "s", color="tab:red",
        label="checkpoint that compacts (absorbs runs)")
ax.set_xlabel("tier-2 keys held after the checkpoint (millions)")
ax.set_ylabel("checkpoint seconds (incl. re-base)")
ax.set_title(f"Format 2 build-up: {len(g)} equal deltas, {g[-1][1] / 1e6:.0f}M keys")
ax.set_ylim(bottom=0)
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("wrote", sys.argv[2])
PY
