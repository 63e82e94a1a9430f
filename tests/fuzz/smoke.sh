#!/usr/bin/env bash
# CI smoke run of every libFuzzer target: SECONDS each (default 30) from the
# checked-in seed corpus, new units kept in a temp dir (the corpus in git
# stays small). Exit non-zero on any crash, leak, sanitizer report or
# timeout, with the reproducer left in the temp dir and named in the log.
# A libFuzzer run is one thread, so up to JOBS targets run at once (default:
# the number of cores, `nproc`): each still gets a core for its SECONDS, as
# when they ran one after another, and the step takes ~SECONDS * 5 / JOBS.
# usage: tests/fuzz/smoke.sh BIN_DIR [SECONDS] [JOBS]
set -euo pipefail
bin_dir=$(cd "${1:?usage: smoke.sh BIN_DIR [SECONDS] [JOBS]}" && pwd)
secs=${2:-30}
jobs=${3:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bloomshard-fuzz-smoke.XXXXXX")
targets=(fuzz_record_reader fuzz_checkpoint_loader fuzz_key_extractor fuzz_reject_writer
  fuzz_run_manifest)

run_target() { # TARGET: its exit code in $work/TARGET.rc, its output in TARGET.log
  local target=$1 rc=0
  mkdir -p "$work/$target"
  (cd "$work" && "$bin_dir/$target" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 "$work/$target" "$here/corpus/$target") >"$work/$target.log" 2>&1 ||
    rc=$?
  echo "$rc" >"$work/$target.rc"
}

running=()
for target in "${targets[@]}"; do
  while ((${#running[@]} >= jobs)); do
    wait -n || true
    mapfile -t running < <(jobs -pr)
  done
  run_target "$target" &
  running+=("$!")
done
wait

status=0
for target in "${targets[@]}"; do
  log=$work/$target.log
  if [[ $(cat "$work/$target.rc") == 0 ]]; then
    echo "fuzz smoke: $target ok: $(grep -m1 '^stat::number_of_executed_units' "$log" |
      awk '{print $2}') executions in ${secs} s"
  else
    echo "fuzz smoke: $target FAILED (log and reproducer in $work)" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "$log" >&2 || tail -20 "$log" >&2
    status=1
  fi
done
[[ $status == 0 ]] && rm -rf "$work"
exit $status
