#!/usr/bin/env bash
# Per-rank volumes of the dedup job at several rank counts (the
# scaling model of docs/scaling.md). One synthetic JSONL corpus, one dedup run
# per rank count (oversubscribed on a small machine: the volumes, rounds and
# memory are what the model predicts and are independent of the cores; the
# times are not cluster times). Prints a markdown table. Not a ctest test.
#
# usage: tests/bench/scaling_benchmark.sh [--records N] [--ranks "1 2 4 8 16"]
#          [--batch-bytes B] [--bin PATH] [--workdir DIR] [--keep]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
records=2000000
ranks_list="1 2 4 8 16"
batch=$((8 << 20))
bin="$repo/build/release/bin/bloomshard"
workdir="${TMPDIR:-/tmp}"
keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --batch-bytes) batch=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling_benchmark: unknown option $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
tmp=$(mktemp -d "$workdir/bloomshard-scaling.XXXXXX")
((keep)) || trap 'rm -rf "$tmp"' EXIT

"$bin" synth --records "$records" --dup-rate 0.3 --files 16 --out "$tmp/in" >/dev/null
input_bytes=$(du -sb "$tmp/in" | cut -f1)
echo "corpus: $records records, $input_bytes bytes in 16 files; batch $batch bytes per rank"
echo
echo "| ranks | rounds | sub-rounds | payload sent per rank (MiB) | to other ranks per rank (MiB) | keys routed per rank per round | max RSS per rank (MiB) | wall (s, oversubscribed) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for r in $ranks_list; do
  out="$tmp/out-$r"
  mpiexec -n "$r" "$bin" dedup --input "$tmp/in" --output "$out" --key-field id \
    --capacity "$records" --batch-bytes "$batch" --metrics "$tmp/m-$r.json" >/dev/null 2>"$tmp/err-$r" ||
    { cat "$tmp/err-$r" >&2; exit 1; }
  python3 - "$tmp/m-$r.json" "$r" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); r = int(sys.argv[2])
mib = 1 << 20
keys = (m["records"] - m["rejected"] - m.get("batch_duplicates", 0)) / r / max(1, m["rounds"])
print(f"| {r} | {m['rounds']} | {m.get('subrounds', m['rounds'])} | {m['payload_bytes'] / r / mib:.1f} | "
      f"{m['bytes_exchanged'] / r / mib:.1f} | {keys:,.0f} | {m['max_rss_bytes'] / mib:.0f} | "
      f"{m['wall_seconds']:.2f} |")
PY
done
