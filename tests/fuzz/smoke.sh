#!/usr/bin/env bash
# CI smoke run of every libFuzzer target: SECONDS each (default 30) from the
# checked-in seed corpus, new units kept in a temp dir (the corpus in git
# stays small). Exit non-zero on the first crash, leak, sanitizer report or
# timeout, with the reproducer left in the temp dir and named in the log.
# usage: tests/fuzz/smoke.sh BIN_DIR [SECONDS]
set -euo pipefail
bin_dir=$(cd "${1:?usage: smoke.sh BIN_DIR [SECONDS]}" && pwd)
secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bloomshard-fuzz-smoke.XXXXXX")
status=0
for target in fuzz_key_extractor fuzz_record_reader fuzz_reject_writer fuzz_run_manifest \
  fuzz_checkpoint_loader; do
  mkdir -p "$work/$target"
  log=$work/$target.log
  if (cd "$work" && "$bin_dir/$target" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 "$work/$target" "$here/corpus/$target") >"$log" 2>&1; then
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
