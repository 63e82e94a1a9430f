#!/usr/bin/env bash
# Dedup job vs. peers. On ONE synthetic JSONL corpus, times
#   1. bloomshard dedup on R ranks (the whole job: read, parse, dedup, write),
#   2. the same job with an in-memory Python set (python_set_dedup.py),
#   3. LC_ALL=C sort -u on the pre-extracted keys (default thread count),
#   4. mawk '!seen[$0]++' on the pre-extracted keys,
#   5. one pipelined SADD per key into a fresh redis-server (redis-cli --pipe),
# checks that all of them agree on the unique-key count, and prints a
# markdown table plus pass/fail for the targets. Not a ctest test:
# a 10M-record run takes a few minutes and needs ~6 GB of scratch disk.
#
# usage: tests/bench/peer_benchmark.sh [--records N] [--dup-rate D] [--files F]
#          [--ranks R] [--fpr P] [--capacity C] [--seed S] [--workdir DIR]
#          [--bin PATH] [--report FILE] [--max-busy CORES] [--load-retries K]
#          [--load-wait SEC] [--keep]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

records=10000000
dup_rate=0.3
files=8
ranks=2
fpr=0.001
capacity=""
seed=1
workdir="${TMPDIR:-/tmp}"
bin="$repo/build/bin/bloomshard"
report=""
max_busy=0.3    # cores busy with other work allowed before measuring
load_retries=5
load_wait=60
keep=0

die() { echo "peer_benchmark: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --dup-rate) dup_rate=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --fpr) fpr=$2; shift 2 ;;
    --capacity) capacity=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --max-busy) max_busy=$2; shift 2 ;;
    --load-retries) load_retries=$2; shift 2 ;;
    --load-wait) load_wait=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
# A user sizing a job knows the record count, not the unique count: the
# default capacity is N, an upper bound on the distinct keys.
[[ -n "$capacity" ]] || capacity=$records

[[ -x "$bin" ]] || die "no bloomshard binary at $bin (build it, or pass --bin)"
for tool in /usr/bin/time python3 mpiexec mawk sort redis-server redis-cli; do
  command -v "$tool" >/dev/null || die "missing tool: $tool"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LC_ALL=C

mkdir -p "$workdir"
work=$(mktemp -d "$workdir/bloomshard-peers.XXXXXX")
redis_pid=""
# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() {
  if [[ -n "$redis_pid" ]] && kill -0 "$redis_pid" 2>/dev/null; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  if [[ $keep -eq 0 ]]; then rm -rf "$work"; else echo "kept workdir: $work" >&2; fi
}
trap cleanup EXIT

exec 3>&2  # log() keeps reaching the terminal while a timed command's stderr is redirected
log() { echo "[$(date +%T)] $*" >&3; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# Cores busy over a 3 s sample (from /proc/stat): unlike the load average it
# does not remember our own untimed preparation steps.
busy_cores() {
  local a b
  read -r -a a < <(grep '^cpu ' /proc/stat)
  sleep 3
  read -r -a b < <(grep '^cpu ' /proc/stat)
  python3 -c '
import sys
a = list(map(int, sys.argv[1].split())); b = list(map(int, sys.argv[2].split()))
d = [y - x for x, y in zip(a, b)]
total = sum(d[:8]); idle = d[3] + d[4]
print(f"{(total - idle) / total * int(sys.argv[3]) if total else 0:.2f}")
' "${a[*]:1}" "${b[*]:1}" "$(nproc)"
}

# Waits until the machine is quiet enough (or gives up and says so).
wait_quiet() {
  local try busy
  for ((try = 0; ; try++)); do
    busy=$(busy_cores)
    if python3 -c "import sys; sys.exit(0 if $busy <= $max_busy else 1)"; then
      log "machine quiet: $busy cores busy, load $(load1)"
      return 0
    fi
    if ((try >= load_retries)); then
      log "machine still busy ($busy cores, load $(load1)) after $load_retries retries: measuring anyway"
      quiet_note="measured while busy ($busy cores used by others)"
      return 0
    fi
    log "machine busy: $busy cores, load $(load1); waiting ${load_wait}s ($((try + 1))/$load_retries)"
    sleep "$load_wait"
  done
}

# timed NAME CMD...: runs CMD under /usr/bin/time; sets wall_NAME, rss_NAME
# (KiB, of the largest process GNU time saw) and load_NAME.
declare -A wall rss loadat
timed() {
  local name=$1; shift
  loadat[$name]=$(load1)
  log "run $name: $*"
  /usr/bin/time -f '%e %M' -o "$work/time.$name" "$@"
  read -r "wall[$name]" "rss[$name]" < <(tail -n1 "$work/time.$name")
  log "  $name: ${wall[$name]} s, ${rss[$name]} KiB"
}

json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(d)' "$1" "$2"; }

quiet_note=""
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
log "workdir $work; $(nproc) cores, $cpu_model; load $(load1)"

# ---- preparation (untimed) ----
corpus="$work/corpus"
"$bin" synth --records "$records" --dup-rate "$dup_rate" --files "$files" \
  --out "$corpus" --compress none --seed "$seed" >&2
unique=$(json_get "$corpus/_SYNTH.json" unique_keys)
corpus_bytes=$(json_get "$corpus/_SYNTH.json" bytes)
log "extracting keys (untimed)"
python3 "$here/python_set_dedup.py" --input "$corpus" --extract-keys "$work/keys.txt" >&2
keys_bytes=$(stat -c %s "$work/keys.txt")
python3 "$here/redis_sadd.py" "$work/keys.txt" "$work/sadd.resp" >&2
cat "$corpus"/*.jsonl "$corpus"/nested/*.jsonl "$work/keys.txt" >/dev/null 2>&1 || true  # warm the page cache

redis_sock="$work/redis.sock"
redis-server --port 0 --unixsocket "$redis_sock" --save '' --appendonly no \
  --daemonize no --dir "$work" --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 50); do
  [[ "$(redis-cli -s "$redis_sock" ping 2>/dev/null)" == PONG ]] && break
  sleep 0.1
done
[[ "$(redis-cli -s "$redis_sock" ping)" == PONG ]] || die "redis-server did not start (see $work/redis.log)"

wait_quiet
load_start=$(cat /proc/loadavg)
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# ---- timed runs ----
bs_cmd=(mpiexec -n "$ranks" "$bin" dedup --input "$corpus" --output "$work/out_bs"
  --key-field id --capacity "$capacity" --fpr "$fpr" --metrics "$work/metrics.json")
timed bloomshard "${bs_cmd[@]}" >"$work/bs.log" 2>&1 || { cat "$work/bs.log" >&2; die "bloomshard dedup failed"; }
cat "$work/bs.log" >&2

timed python python3 "$here/python_set_dedup.py" --input "$corpus" --output "$work/out_py" \
  --key-field id >"$work/py.json"

sort_threads=$(nproc); ((sort_threads > 8)) && sort_threads=8
timed sort sort -u "$work/keys.txt" >/dev/null

# shellcheck disable=SC2016  # $0 is awk's, not the shell's
timed awk mawk '!seen[$0]++' "$work/keys.txt" >/dev/null

redis_rss_before=$(awk '/VmRSS/ {print $2}' "/proc/$redis_pid/status")
timed redis redis-cli -s "$redis_sock" --pipe <"$work/sadd.resp" >"$work/redis_pipe.log" 2>&1
redis_hwm=$(awk '/VmHWM/ {print $2}' "/proc/$redis_pid/status")
redis_peak=$(redis-cli -s "$redis_sock" info memory | tr -d '\r' | awk -F: '/^used_memory_peak:/ {print $2}')
redis_card=$(redis-cli -s "$redis_sock" scard bloomshard:peer)
redis_client_rss=${rss[redis]}
rss[redis]=$redis_hwm
load_end=$(cat /proc/loadavg)

# ---- correctness (untimed) ----
log "checking results (untimed)"
m="$work/metrics.json"
bs_records=$(json_get "$m" records); bs_kept=$(json_get "$m" kept)
bs_dups=$(json_get "$m" duplicates); bs_rej=$(json_get "$m" rejected)
bs_t2=$(json_get "$m" tier2_lookups); bs_fp=$(json_get "$m" false_positives)
bs_bdups=$(json_get "$m" batch_duplicates)
bs_maybe=$(json_get "$m" tier1_maybe); bs_inwall=$(json_get "$m" wall_seconds)
bs_rank_rss=$(($(json_get "$m" max_rss_bytes) / 1024))
bs_rounds=$(json_get "$m" rounds); bs_xchg=$(json_get "$m" bytes_exchanged)
phases=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["phase_seconds"]
print(", ".join(f"{k} {v:.2f} s" for k, v in p.items()))' "$m")

py_kept=$(json_get "$work/py.json" kept)
py_lines=$(find "$work/out_py" -type f -exec cat {} + | wc -l)
rm -rf "$work/out_py"
sort -u "$work/keys.txt" -o "$work/keys.unique"
sort_count=$(wc -l <"$work/keys.unique")
awk_count=$(mawk '!seen[$0]++' "$work/keys.txt" | wc -l)
grep -q 'errors: 0' "$work/redis_pipe.log" || die "redis-cli --pipe reported errors: $(cat "$work/redis_pipe.log")"

# bloomshard's outputs must hold every unique key exactly once.
python3 "$here/python_set_dedup.py" --input "$work/out_bs" --extract-keys "$work/keys.bs" >/dev/null
sort "$work/keys.bs" -o "$work/keys.bs"
bs_out_lines=$(wc -l <"$work/keys.bs")
if cmp -s "$work/keys.bs" "$work/keys.unique"; then bs_set_ok=yes; else bs_set_ok=NO; fi

# ---- report ----
status=0
python3 - "$work" >"$work/report.md" <<PY || status=$?
import sys
wall = {"bloomshard": ${wall[bloomshard]}, "python": ${wall[python]},
        "sort": ${wall[sort]}, "awk": ${wall[awk]}, "redis": ${wall[redis]}}
rss = {"bloomshard": $bs_rank_rss, "python": ${rss[python]}, "sort": ${rss[sort]},
       "awk": ${rss[awk]}, "redis": ${rss[redis]}}
counts = {"bloomshard": $bs_kept, "python": $py_kept, "sort": $sort_count,
          "awk": $awk_count, "redis": $redis_card}
unique = $unique
fpr = $fpr
names = {
    "bloomshard": "bloomshard dedup, $ranks ranks (whole job; RSS = max over ranks)",
    "python": "Python set, same job (json.loads, write kept)",
    "sort": "LC_ALL=C sort -u keys ($sort_threads threads, default), keys only",
    "awk": "mawk '!seen[\$0]++' keys, keys only",
    "redis": "redis SADD per key, redis-cli --pipe (RSS = server VmHWM)",
}
mib = lambda k: k / 1024
b = wall["bloomshard"]
print("| method | wall s | peak RSS MiB | wall / bloomshard | unique/kept | = $unique |")
print("|---|---:|---:|---:|---:|:---:|")
for k in ["bloomshard", "python", "sort", "awk", "redis"]:
    ok = "yes" if counts[k] == unique else "NO"
    print(f"| {names[k]} | {wall[k]:.2f} | {mib(rss[k]):.1f} | {wall[k] / b:.2f} | {counts[k]:,} | {ok} |")
print()
print(f"bloomshard in-job wall_seconds {$bs_inwall:.2f} s (mpiexec wall {b:.2f} s, incl. MPI start-up);"
      f" mpiexec's own time %M {mib(${rss[bloomshard]}):.1f} MiB")
print(f"bloomshard phase_seconds (max over ranks): $phases; rounds $bs_rounds, bytes exchanged $bs_xchg")
print(f"redis: used_memory_peak {mib($redis_peak / 1024):.1f} MiB, RSS before load {mib($redis_rss_before):.1f} MiB,"
      f" redis-cli client {mib($redis_client_rss):.1f} MiB")
print()
checks = [
    ("records == N", $bs_records == $records),
    ("rejected == 0", $bs_rej == 0),
    ("all methods' unique/kept counts == $unique", all(c == unique for c in counts.values())),
    ("Python output lines == kept ($py_lines)", $py_lines == $py_kept),
    ("bloomshard outputs hold each unique key exactly once ($bs_out_lines lines, set equal: $bs_set_ok)",
     "$bs_set_ok" == "yes" and $bs_out_lines == unique),
    ("tier1_maybe ($bs_maybe) == tier2_lookups ($bs_t2)", $bs_maybe == $bs_t2),
    ("tier2_lookups ($bs_t2) == duplicates ($bs_dups) - batch_duplicates ($bs_bdups) + false_positives ($bs_fp)", $bs_t2 == $bs_dups - $bs_bdups + $bs_fp),
    (f"false_positives/kept = {$bs_fp / max($bs_kept, 1):.2e} <= 1.2 x fpr = {1.2 * fpr:.2e}",
     $bs_fp / max($bs_kept, 1) <= 1.2 * fpr),
]
print("Correctness:")
for text, ok in checks:
    print(f"- {'PASS' if ok else 'FAIL'}: {text}")
print()
py_ratio = wall["python"] / b
rss_ratio = rss["python"] / rss["bloomshard"]
targets = [
    (f"whole job >= 8x faster than the Python-set job: {py_ratio:.2f}x", py_ratio >= 8),
    (f"faster than sort -u on the pre-extracted keys alone: {b:.2f} s vs {wall['sort']:.2f} s", b < wall["sort"]),
    (f"peak RSS per rank >= 3x below Python's: Python/rank = {rss_ratio:.2f}x"
     f" ({mib(rss['python']):.1f} vs {mib(rss['bloomshard']):.1f} MiB)", rss_ratio >= 3),
]
print("Targets (issue 3; bloomshard wall = whole mpiexec):")
for text, ok in targets:
    print(f"- {'PASS' if ok else 'FAIL'}: {text}")
inj = $bs_inwall
print(f"  (with the in-job wall_seconds {inj:.2f} s instead: Python {wall['python'] / inj:.2f}x,"
      f" sort -u {wall['sort'] / inj:.2f}x)")
failed = sum(not ok for _, ok in checks)
sys.exit(1 if failed else 0)
PY
{
  echo "Run: $date_start; N = $records records, dup-rate $dup_rate, $files files, seed $seed;"
  echo "corpus $((corpus_bytes / 1000000)) MB JSONL (uncompressed), keys file $((keys_bytes / 1000000)) MB;"
  echo "capacity $capacity, fpr $fpr, $ranks ranks; $("$bin" --version 2>/dev/null | head -n1 || echo '?')"
  echo "Machine: nproc $(nproc), $cpu_model, $(uname -r); python $(python3 -c 'import platform; print(platform.python_version())'),"
  echo "$(redis-server --version | cut -d' ' -f1-3), $(sort --version | head -n1), mawk $(mawk -W version 2>&1 | head -n1 | awk '{print $2}')"
  echo "Load average at start: $load_start; at end: $load_end ${quiet_note:+($quiet_note)}"
  echo "Load (1 min) before each run: bloomshard ${loadat[bloomshard]}, python ${loadat[python]}, sort ${loadat[sort]}, awk ${loadat[awk]}, redis ${loadat[redis]}"
  echo
  cat "$work/report.md"
} | tee "${report:-/dev/null}"
exit $status
