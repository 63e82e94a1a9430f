#!/usr/bin/env bash
# Checkpoint and resume benchmark. Not a ctest test. In one run:
#  A. a filter of --keys keys (ckpt_bench, 2 ranks, P = 4096, p = 0.1%):
#     checkpoint write vs `dd oflag=direct` of the same size (--repeat times
#     each, medians; the disk is noisy); cold resume
#     (`ckpt_bench load`, process start to loaded + verified) vs a cold
#     `cat file > /dev/null`, alternating, --repeat times each, medians;
#     caches dropped before each cold step (root).
#  B. one synthetic corpus of --records records, killed at ~70% (SIGUSR1 to
#     the ranks once the outputs hold 70% of an uninterrupted run's bytes)
#     and restarted with the same arguments:
#       bloomshard dedup --state (resume from LATEST),
#       re-scan outputs: re-read every output file and re-insert its keys,
#       in-memory Python set (python_set_dedup.py; no state: starts over),
#       Redis set (SADD pipeline; server without persistence: starts over);
#     columns: cold-start recovery, peak memory per rank, tier-2 lookups/s,
#     records lost to false positives, records processed twice. bloomshard's
#     outputs are checked exactly-once by tests/e2e/oracle.py.
# usage: tests/bench/resume_benchmark.sh [--keys N] [--records R] [--ranks 2] [--repeat 3]
#          [--build DIR] [--workdir DIR] [--report FILE] [--skip-a] [--skip-b]
#          [--max-delta-bytes B] [--checkpoint-every S] [--batch-bytes B] [--keep]
# Needs root for drop_caches (else the "cold" figures are warm: it says so),
# python3, redis-server + redis-cli, Open MPI, GNU time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
keys=100000000
records=10000000
ranks=2
repeat=3
build="$repo/build/ckptperf"
workdir="${TMPDIR:-/tmp}"
report=""
skip_a=0
skip_b=0
max_delta=$((64 << 20))
ckpt_every=30
batch_bytes=$((8 << 20))
keep=0
die() { echo "resume_benchmark: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keys) keys=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --skip-a) skip_a=1; shift ;;
    --skip-b) skip_b=1; shift ;;
    --max-delta-bytes) max_delta=$2; shift 2 ;;
    --checkpoint-every) ckpt_every=$2; shift 2 ;;
    --batch-bytes) batch_bytes=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1" ;;
  esac
done
bin=$(find "$build" -name bloomshard -type f -perm -u+x | head -n1)
bench="$build/tests/io_mpi/bloomshard_ckpt_bench"
[[ -x "$bin" ]] || die "no bloomshard under $build (build target bloomshard)"
[[ -x "$bench" ]] || die "no $bench (build target bloomshard_ckpt_bench)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpiexec -n "$ranks")

work=$(mktemp -d "$workdir/resume_bench.XXXXXX")
redis_pid=""
cleanup() {
  [[ -n "$redis_pid" ]] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  [[ $keep == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
can_drop=0
[[ -w /proc/sys/vm/drop_caches ]] && can_drop=1
drop_caches() { sync; [[ $can_drop == 1 ]] && echo 3 >/proc/sys/vm/drop_caches; true; }
out=$(mktemp)
say() { echo "$*" | tee -a "$out"; }

say "## resume_benchmark $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname -s): $(nproc) cores,"\
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo),"\
  "load $(cut -d' ' -f1-3 /proc/loadavg); drop_caches $([[ $can_drop == 1 ]] && echo yes || echo 'NO (cold = warm)')"
say "MPI-IO component: ${OMPI_MCA_io:-default (ompio)}"

# ---------------------------------------------------------------- part A
if [[ $skip_a == 0 ]]; then
  need=$((keys * 60 / 1000000))  # MB: ~51 bytes per 33-byte key in the file, plus dd's copy
  avail=$(df -Pm "$work" | awk 'NR == 2 {print $4}')
  ((avail > 2 * need)) || die "need ~$((2 * need)) MB free under $work, have $avail MB; lower --keys"
  say ""
  say "### A. $keys keys, $ranks ranks"
  "${mpi[@]}" "$bench" "$keys" "$work/a" "$repeat" >"$work/a.log" 2>&1 || { cat "$work/a.log"; die "ckpt_bench failed"; }
  cat "$work/a.log" >>"$out"
  file=$(sed -n 's/.*(\(.*ckpt-[0-9]*\.h5\)).*/\1/p' "$work/a.log")
  # Format 2: the generation file holds the Bloom bits, its run files tier 2.
  size=$(du -cb "$file" "$(dirname "$file")"/run-*.h5 2>/dev/null | tail -1 | cut -f1)
  writes=$(awk '/^write/ {sub("s", "", $2); printf "%s ", $2}' "$work/a.log")
  write_s=$(echo "$writes" | median)
  build_s=$(awk '/^ranks/ {for (i = 1; i <= NF; ++i) if ($i == "build") {sub("s", "", $(i+1)); print $(i+1)}}' "$work/a.log")
  count=$(((size + (16 << 20) - 1) / (16 << 20)))
  dds=""
  for ((i = 0; i < repeat; ++i)); do
    drop_caches
    t0=$(now); dd if=/dev/zero of="$work/dd.bin" bs=16M count="$count" oflag=direct status=none; t1=$(now)
    dds+="$(elapsed "$t0" "$t1") "; rm -f "$work/dd.bin"
  done
  dd_s=$(echo "$dds" | median)
  say "checkpoint writes (s): $writes; median $write_s"
  say "dd oflag=direct (s): $dds; median $dd_s"
  # Alternating, so that both see the same disk (deleting the dd files
  # makes the ext4 `discard` mount trim in the background for a while).
  loads="" cats=""
  for ((i = 0; i < repeat; ++i)); do
    drop_caches
    t0=$(now); "${mpi[@]}" "$bench" load "$file" >"$work/load.log" 2>&1; t1=$(now)
    loads+="$(elapsed "$t0" "$t1") "
    drop_caches
    t0=$(now); cat "$file" >/dev/null; t1=$(now)
    cats+="$(elapsed "$t0" "$t1") "
  done
  resume_s=$(echo "$loads" | median)
  cat_s=$(echo "$cats" | median)
  say "cold resume (s): $loads; median $resume_s"
  say "cold cat (s): $cats; median $cat_s"
  mb=$(awk -v s="$size" 'BEGIN { printf "%.0f", s / 1e6 }')
  say ""
  say "| step | seconds | MB/s | ratio |"
  say "|---|---|---|---|"
  say "| checkpoint write ($mb MB), median of $repeat | $write_s | $(awk -v s="$size" -v t="$write_s" 'BEGIN {printf "%.0f", s/1e6/t}') | $(awk -v a="$dd_s" -v b="$write_s" 'BEGIN {printf "%.2fx dd (target >= 0.7x)", a/b}') |"
  say "| dd oflag=direct, same size, median of $repeat | $dd_s | $(awk -v s="$size" -v t="$dd_s" 'BEGIN {printf "%.0f", s/1e6/t}') | 1 |"
  say "| cold resume: mpiexec ckpt_bench load (verify), median of $repeat | $resume_s | $(awk -v s="$size" -v t="$resume_s" 'BEGIN {printf "%.0f", s/1e6/t}') | $(awk -v a="$cat_s" -v b="$resume_s" 'BEGIN {printf "%.2fx cat (target <= 1.5x)", b/a}') |"
  say "| cold cat file > /dev/null, median of $repeat | $cat_s | $(awk -v s="$size" -v t="$cat_s" 'BEGIN {printf "%.0f", s/1e6/t}') | 1 |"
  say "| re-insert all $keys keys (hash + insert, no file reading: a lower bound of a rescan) | $build_s | | $(awk -v a="$build_s" -v b="$resume_s" 'BEGIN {printf "resume is %.1fx faster", a/b}') |"
  rm -rf "$work/a"
fi

# ---------------------------------------------------------------- part B
if [[ $skip_b == 0 ]]; then
  say ""
  say "### B. $records records (dup rate 0.3), killed at ~70% and restarted, $ranks ranks"
  corpus="$work/corpus"
  "$bin" synth --records "$records" --dup-rate 0.3 --files 8 --out "$corpus" >/dev/null
  # This job's ranks: bloomshard processes below our own background job
  # (never other users' bloomshard processes).
  ranks_of() {
    local c
    for c in $(pgrep -P "$1"); do
      [[ "$(cat "/proc/$c/comm" 2>/dev/null)" == bloomshard ]] && echo "$c"
      ranks_of "$c"
    done
  }
  # Peak anonymous RSS of the job's ranks, sampled every 0.2 s.
  sample_rss() {  # $1 = mpiexec pid, $2 = file for the max RssAnon (kB); runs until killed
    local max=0 v
    while true; do
      for p in $(ranks_of "$1"); do
        v=$(awk '/RssAnon/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
        ((${v:-0} > max)) && max=$v
      done
      echo "$max" >"$2"
      sleep 0.2
    done
  }
  job() {  # $1 = output dir, $2 = state dir, $3 = metrics
    "${mpi[@]}" "$bin" dedup --input "$corpus" --output "$1" --key-field id --capacity "$records" \
      --fpr 0.001 --state "$2" --checkpoint-every "$ckpt_every" --max-delta-bytes "$max_delta" \
      --batch-bytes "$batch_bytes" --metrics "$3" --progress 0
  }
  # Reference: the uninterrupted run, for the kill time.
  t0=$(now); job "$work/ref_out" "$work/ref_state" "$work/ref.json" >"$work/ref.log" 2>&1; t1=$(now)
  ref_s=$(elapsed "$t0" "$t1")
  ref_bytes=$(du -sb "$work/ref_out" | cut -f1)
  rm -rf "$work/ref_out" "$work/ref_state"
  stop_bytes=$((ref_bytes * 7 / 10))
  # Run 1, stopped at ~70%: SIGUSR1 to the ranks (checkpoint, exit 75).
  job "$work/out" "$work/state" "$work/m1.json" >"$work/run1.log" 2>&1 & jp=$!
  sample_rss "$jp" "$work/rss1" & sampler=$!
  t0=$(now)
  while kill -0 "$jp" 2>/dev/null; do  # until 70% of the reference run's output bytes
    [[ -d "$work/out" ]] && (($(du -sb "$work/out" | cut -f1) >= stop_bytes)) && break
    sleep 0.05
  done
  kill_at=$(elapsed "$t0" "$(now)")
  for p in $(ranks_of "$jp"); do kill -USR1 "$p" 2>/dev/null || true; done
  rc=0; wait "$jp" || rc=$?
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  cp -r "$work/out" "$work/out_at_kill"
  # Run 2: same arguments, cold caches; recovery = process start to the
  # "resuming" line (printed once the checkpoint is loaded and verified).
  "$bin" info --state "$work/state" --json >"$work/cut.json"  # counters at the cut
  drop_caches
  t0=$(now)
  job "$work/out" "$work/state" "$work/m2.json" >"$work/run2.log" 2>&1 & jp=$!
  sample_rss "$jp" "$work/rss2" & sampler=$!
  t_resume=""
  while kill -0 "$jp" 2>/dev/null; do
    if [[ -z "$t_resume" ]] && grep -q resuming "$work/run2.log"; then t_resume=$(now); fi
    sleep 0.01
  done
  rc2=0; wait "$jp" || rc2=$?
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  [[ -n "$t_resume" ]] || grep -q resuming "$work/run2.log" && t_resume=${t_resume:-$(now)}
  [[ -n "$t_resume" && $rc2 == 0 ]] || { cat "$work/run2.log"; die "run 2 did not resume/finish (run 1 exit $rc, run 2 exit $rc2)"; }
  bs_recovery=$(elapsed "$t0" "$t_resume")
  bs_rss=$(cat "$work/rss1" "$work/rss2" | sort -n | tail -n1)
  python3 "$repo/tests/e2e/oracle.py" --help >/dev/null 2>&1 || die "oracle.py not usable"
  if python3 "$repo/tests/e2e/oracle.py" --input "$corpus" --output "$work/out" --key-field id >"$work/oracle.log" 2>&1; then
    oracle="pass"; twice=0; lost=0
  else
    oracle="FAIL: $(head -n1 "$work/oracle.log")"; twice="see oracle"; lost="see oracle"
  fi
  # Counters are cumulative over the run (the checkpoint carries them), the
  # phase seconds are run 2's own: run 2's tier-2 lookups (duplicates + false
  # positives) = its totals - the cut's (the cut's false positives are not
  # in `info`: at most the run's 47-ish, negligible).
  read -r bs_lookups bs_metrics_rss < <(python3 - "$work/cut.json" "$work/m2.json" <<'EOF'
import json, sys
cut, m2 = (json.load(open(p)) for p in sys.argv[1:3])
look = m2.get("duplicates", 0) + m2.get("false_positives", 0) - cut.get("duplicates", 0)
dec = m2.get("phase_seconds", {}).get("decide", 0) or 1e-9
print(f"{look / dec:.0f}", m2.get("max_rss_anon_bytes", 0))
EOF
)
  # Re-scan peer: read every output file written before the kill, re-insert its keys.
  t0=$(now)
  python3 "$here/python_set_dedup.py" --input "$work/out_at_kill" --output "$work/rescan" >"$work/rescan.json"
  t1=$(now); rescan_s=$(elapsed "$t0" "$t1")
  rescan_rss=$( { /usr/bin/time -v python3 "$here/python_set_dedup.py" --input "$work/out_at_kill" \
    --output "$work/rescan2" >/dev/null; } 2>&1 | awk '/Maximum resident/ {print $6}')
  # Python set: no state; the restart re-processes the first 70%.
  t0=$(now)
  py_rss=$( { /usr/bin/time -v python3 "$here/python_set_dedup.py" --input "$corpus" --output "$work/py_out" \
    >/dev/null; } 2>&1 | awk '/Maximum resident/ {print $6}')
  t1=$(now); py_s=$(elapsed "$t0" "$t1")
  py_recovery=$(awk -v t="$py_s" 'BEGIN {printf "%.1f", 0.7 * t}')
  # Redis set without persistence: the restart re-sends the first 70%.
  python3 "$here/python_set_dedup.py" --input "$corpus" --extract-keys "$work/keys.txt" >/dev/null
  python3 "$here/redis_sadd.py" "$work/keys.txt" "$work/sadd.resp" >/dev/null
  redis-server --port 0 --unixsocket "$work/redis.sock" --save '' --appendonly no --daemonize no \
    --dir "$work" --logfile "$work/redis.log" & redis_pid=$!
  for _ in $(seq 50); do [[ "$(redis-cli -s "$work/redis.sock" ping 2>/dev/null)" == PONG ]] && break; sleep 0.1; done
  t0=$(now); redis-cli -s "$work/redis.sock" --pipe <"$work/sadd.resp" >/dev/null; t1=$(now)
  redis_s=$(elapsed "$t0" "$t1")
  redis_rss=$(awk '/VmHWM/ {print $2}' "/proc/$redis_pid/status")
  kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=""
  redis_recovery=$(awk -v t="$redis_s" 'BEGIN {printf "%.1f", 0.7 * t}')
  killed=$(python3 -c "import json;print(json.load(open('$work/rescan.json')).get('records','?'))" 2>/dev/null || echo '?')
  mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
  say ""
  say "uninterrupted bloomshard run ${ref_s}s; SIGUSR1 at ${kill_at}s (70% of its output bytes) (run 1 exit $rc); records output before the kill: $killed"
  say ""
  say "| method | cold-start recovery (s) | peak memory per rank (MiB) | tier-2 / set lookups per s | records lost to false positives | records processed twice |"
  say "|---|---|---|---|---|---|"
  say "| bloomshard (resume from LATEST) | $bs_recovery | $(mib "$bs_rss") RssAnon (run 2 metrics: $((bs_metrics_rss / 1048576))) | $bs_lookups (tier2 lookups / decide s) | $lost (oracle: $oracle) | $twice |"
  say "| re-scan outputs + rebuild (Python set) | $rescan_s | $(mib "$rescan_rss") RSS | n/a | 0 | 0 (needs a cursor it does not have: per-file restart) |"
  say "| in-memory Python set (starts over) | $py_recovery (0.7 x ${py_s}s) | $(mib "$py_rss") RSS | $(awk -v r="$records" -v t="$py_s" 'BEGIN {printf "%.0f", r/t}') (records / s, whole job) | 0 | ~70% of $records |"
  say "| Redis set, no persistence (starts over) | $redis_recovery (0.7 x ${redis_s}s) | $(mib "$redis_rss") server VmHWM | $(awk -v r="$records" -v t="$redis_s" 'BEGIN {printf "%.0f", r/t}') (SADD / s) | 0 | ~70% of $records |"
  say ""
  say "RssAnon target: <= 0.2 x Python set peak = $(awk -v k="$py_rss" 'BEGIN {printf "%.0f", 0.2 * k / 1024}') MiB per rank; bloomshard $(mib "$bs_rss") MiB"
fi
[[ -n "$report" ]] && cp "$out" "$report"
rm -f "$out"
