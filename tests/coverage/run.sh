#!/usr/bin/env bash
# Line and branch coverage of src/ per folder (docs/coverage.md). Not a ctest
# test. Configures and builds the `coverage` preset (GCC, --coverage -O0 -g,
# atomic counters, build/coverage), zeroes the counters, runs the suite but the tests labelled
# slurm or multihost (they hold fixed system resources), then asks gcovr for
# every file under src/ with throw branches and unreachable branches
# excluded, and sums the files per folder.
# usage: tests/coverage/run.sh [--jobs N] [--tests REGEX] [--labels REGEX]
#          [--skip-build] [--skip-tests] [--keep-counters] [--report DIR]
#          [--uncovered FOLDER]...
#   --jobs N          build and ctest parallelism (default 2)
#   --tests REGEX     run only the tests ctest -R selects (default: all)
#   --labels REGEX    run only the tests with a label ctest -L selects
#   --skip-build      use build/coverage as it is
#   --skip-tests      keep the counters of earlier runs, only report
#   --keep-counters   run the tests without deleting the counters first: a
#                     subset run in parts (--tests A, then --tests B) adds up
#   --report DIR      where the reports go (default build/coverage/coverage)
#   --uncovered F     also list each uncovered line and branch of folder F
#                     (a path under src/, e.g. src/core); repeatable
# Output in DIR: coverage.json (gcovr's full report), summary.txt (the table
# of docs/coverage.md), ctest.log, uncovered-*.txt. A test that fails is
# listed and the script goes on: its coverage still counts (timed fault tests
# can miss their deadlines in an -O0 build on a loaded machine). Exit 0
# unless the build or gcovr fails.
# Needs gcovr (Debian package, 5.2 checked) and /usr/bin/python3.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$repo/build/coverage"
jobs=2
tests_regex=""
labels_regex=""
skip_build=0
skip_tests=0
keep_counters=0
report=""
uncovered=()
while (($#)); do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --tests) tests_regex=$2; shift 2 ;;
    --labels) labels_regex=$2; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --skip-tests) skip_tests=1; shift ;;
    --keep-counters) keep_counters=1; shift ;;
    --report) report=$2; shift 2 ;;
    --uncovered) uncovered+=("$2"); shift 2 ;;
    *) echo "coverage/run.sh: unknown argument '$1' (see the usage at the top of the script)" >&2
       exit 2 ;;
  esac
done
report=${report:-$build/coverage}
command -v gcovr >/dev/null || { echo "coverage/run.sh: gcovr not found (Debian package gcovr)" >&2; exit 2; }

cd "$repo"
if ((!skip_build)); then
  cmake --preset coverage >/dev/null
  cmake --build --preset coverage -j "$jobs"
fi
mkdir -p "$report"

if ((!skip_tests)); then
  # Counters of earlier runs would add to this one's (unless that is the point).
  ((keep_counters)) || find "$build" -name '*.gcda' -delete
  ctest_args=(--test-dir "$build" -LE 'slurm|multihost' -j "$jobs" --timeout 600
              --output-on-failure)
  [[ -n $tests_regex ]] && ctest_args+=(-R "$tests_regex")
  [[ -n $labels_regex ]] && ctest_args+=(-L "$labels_regex")
  start=$(date +%s)
  ctest "${ctest_args[@]}" >"$report/ctest.log" 2>&1 || true
  echo "ctest: $(( $(date +%s) - start )) s; $(grep -E 'tests passed|tests failed' "$report/ctest.log" || echo 'no summary')"
  sed -n '/The following tests FAILED/,$p' "$report/ctest.log"
fi

# One gcov pass over every object; the per-folder sums come from its JSON.
# No --object-directory: with it gcovr runs gcov only there and in the root,
# where the relative source paths of a ccache build (CCACHE_BASEDIR makes
# them "../../../src/...") do not resolve; without it gcovr also tries each
# folder above the counters, among them the one the compiler ran in.
# --gcov-ignore-parse-errors: threads (the Python module's lookups with
# the GIL released, the watchdog) update counters without atomics, and a
# lost update can leave a negative branch count that gcovr 5.2 refuses to
# parse (it stopped a whole report at store/file_mapping.cpp); the line is
# dropped instead. The cure is -fprofile-update=atomic in the preset.
gcovr --root "$repo" --filter "$repo/src/" --gcov-ignore-parse-errors \
  --exclude-throw-branches --exclude-unreachable-branches -j "$jobs" \
  --json "$report/coverage.json" "$build" 2>"$report/gcovr.log" \
  || { tail -20 "$report/gcovr.log" >&2; exit 1; }
if grep -q 'could not infer a working directory' "$report/gcovr.log"; then
  echo "coverage/run.sh: gcov could not find the sources of some counters" \
       "(listed in $report/gcovr.log): those files are missing from the table" >&2
fi

/usr/bin/python3 "$here/summarize.py" "$report/coverage.json" \
  | tee "$report/summary.txt"
for folder in "${uncovered[@]}"; do
  out="$report/uncovered-$(echo "$folder" | tr '/' '_').txt"
  /usr/bin/python3 "$here/summarize.py" "$report/coverage.json" --uncovered "$folder" >"$out"
  echo "uncovered lines and branches of $folder: $out ($(grep -c . "$out") lines)"
done
