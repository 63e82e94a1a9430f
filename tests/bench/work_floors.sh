#!/usr/bin/env bash
# The floors under the dedup job's copy-floor target (issue 34: the whole job
# at most 2.0x `cp -r` of its inputs). On one plain JSONL corpus, ROUNDS
# rounds of, in an order rotated every round:
#   copy     cp -r CORPUS (the copy floor the target is stated against)
#   extract  R processes at once, each its rank's share of the inputs
#            (the job's own split and assignment): read, split lines,
#            validate each line as JSON and look its key up
#            (bloomshard_read_phase_throughput --stage extract)
#   feed     the same + key build, XXH3-128 and the round batch: the job's
#            whole read phase (--stage feed)
#   write    the same + the kept share of the records written to one file
#            a process (--stage write: every record whose key hash falls in
#            the first 700 of 1000; the synth corpus keeps 70%)
#   start    the same job on a one-record input: mpiexec's launch, MPI_Init,
#            the job's setup at the same --capacity (filter and arenas) and
#            MPI_Finalize, which the job pays once
#   job      mpiexec -n R bloomshard dedup (the whole job, as timed by the
#            target; EXTRA DEDUP OPTIONS are passed on)
#   sort     LC_ALL=C sort -u on the keys, extracted beforehand (untimed;
#            the peer of the target's "3x faster than sort -u")
# The floor processes run without MPI, exchange and verdicts: what they do
# is a part of what the job must do (no line is taken without validation:
# bad input is rejected by file and line), on the same cores. Each process
# is timed whole (/usr/bin/time), its start included. Prints, per method,
# the median wall and CPU (user + system), the median of the per-round
# ratios to the copy, and the share of the job's wall each floor is;
# "write + start" (per round) is the floor the job cannot go under.
# Not a ctest test: minutes, and ~2x the corpus of disk; a quiet machine.
#
# usage: tests/bench/work_floors.sh --bin BLOOMSHARD --floor-bin READ_PHASE_BIN
#          --corpus DIR [--ranks R] [--rounds K] [--workdir DIR]
#          [-- EXTRA DEDUP OPTIONS]
#   READ_PHASE_BIN: cmake --build <dir> --target bloomshard_read_phase_throughput
#   (tests/bench/bloomshard_read_phase_throughput in the build tree)
set -euo pipefail

bin=""
floor_bin=""
corpus=""
ranks=2
rounds=5
workdir="${TMPDIR:-/tmp}"
extra=()

die() { echo "work_floors: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --floor-bin) floor_bin=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,35p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
[[ -x "$bin" ]] || die "no bloomshard binary at '$bin' (pass --bin)"
[[ -x "$floor_bin" ]] || die "no floor binary at '$floor_bin' (pass --floor-bin)"
[[ -f "$corpus/_SYNTH.json" ]] || die "'$corpus' is not a bloomshard synth corpus (--corpus)"
[[ "$rounds" -ge 1 && "$ranks" -ge 1 ]] || die "--rounds and --ranks must be >= 1"
for tool in /usr/bin/time python3 mpiexec cp sort; do
  command -v "$tool" >/dev/null || die "missing tool: $tool"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

mkdir -p "$workdir"
work=$(mktemp -d "$workdir/bloomshard-floors.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "[$(date +%T)] $*" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }
results="$work/results.txt"
: >"$results"

# One line per timed run: method round wall_s cpu_s
timed() {  # METHOD ROUND COMMAND...
  local method=$1 round=$2
  shift 2
  local t="$work/time.txt"
  /usr/bin/time -f '%e %U %S' -o "$t" "$@" >"$work/$method.log" 2>&1 ||
    die "$method failed in round $round (see $work/$method.log)"
  read -r wall user sys <"$t"
  echo "$method $round $wall $(python3 -c "print($user + $sys)")" >>"$results"
}

# Every process of a floor at once, each its rank's share; waits for all.
floor_pair() {  # STAGE
  local stage=$1 pids=() r
  for ((r = 0; r < ranks; r++)); do
    rm -rf "$work/scratch$r"
    "$floor_bin" "$corpus" --rank "$r" --ranks "$ranks" --repeat 1 --stage "$stage" \
      --scratch "$work/scratch$r" >"$work/floor$r.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
}
export -f floor_pair
export floor_bin corpus ranks work

run_method() {  # METHOD ROUND
  case "$1" in
    copy) rm -rf "$work/copy"; timed copy "$2" cp -r "$corpus" "$work/copy"; rm -rf "$work/copy" ;;
    extract | feed | write) timed "$1" "$2" bash -c "floor_pair $1" ;;
    sort) timed sort "$2" env LC_ALL=C sort -u -o "$work/sorted.txt" "$work/keys.txt" ;;
    start | job)
      local input=$corpus
      [[ $1 == start ]] && input=$work/tiny
      rm -rf "$work/out"
      timed "$1" "$2" mpiexec -n "$ranks" "$bin" dedup --input "$input" --output "$work/out" \
        --key-field id --capacity "$records" --fpr 0.001 --progress 0 "${extra[@]}"
      rm -rf "$work/out"
      ;;
  esac
}

records=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"])' \
  "$corpus/_SYNTH.json")
mkdir -p "$work/tiny"
echo '{"id":"one"}' >"$work/tiny/one.jsonl"
log "extracting keys for sort -u (untimed)"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python3 "$here/python_set_dedup.py" --input "$corpus" --extract-keys "$work/keys.txt" >/dev/null
methods=(copy extract feed write start job sort)
log "corpus $corpus ($records records), $ranks ranks, $rounds rounds + 1 warm-up, load $(load1)"
for ((round = 0; round <= rounds; round++)); do
  n=${#methods[@]}
  for ((k = 0; k < n; k++)); do
    run_method "${methods[$(((k + round) % n))]}" "$round"
  done
  log "round $round done, load $(load1)"
done

python3 - "$results" <<'PYEOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by = {}
for method, rnd, wall, cpu in rows:
    if rnd == "0":
        continue  # the warm-up round
    by.setdefault(method, {})[int(rnd)] = (float(wall), float(cpu))
# The floor the job cannot go under: its read, validation, hash and writes
# (write) plus what it pays once to start and end under mpiexec (start).
by["write + start"] = {r: (by["write"][r][0] + by["start"][r][0],
                           by["write"][r][1] + by["start"][r][1]) for r in by["write"]}
copy = by["copy"]
job = by["job"]
print("| method | wall s (median) | CPU s (median) | x the copy (per round, median; min-max) | share of the job's wall |")
print("|---|---:|---:|---:|---:|")
for method in ["copy", "extract", "feed", "write", "start", "write + start", "job", "sort"]:
    runs = by[method]
    walls = [w for w, _ in runs.values()]
    cpus = [c for _, c in runs.values()]
    ratios = [runs[r][0] / copy[r][0] for r in runs]
    shares = [runs[r][0] / job[r][0] for r in runs]
    print(f"| {method} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} | "
          f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | "
          f"{statistics.median(shares):.2f} |")
sort = by["sort"]
floor = by["write + start"]
print()
print(f"sort -u / the job: {statistics.median(sort[r][0] / job[r][0] for r in job):.2f}x; "
      f"sort -u / (write + start): {statistics.median(sort[r][0] / floor[r][0] for r in job):.2f}x "
      "(the most any job doing this work could be faster than sort -u)")
PYEOF
