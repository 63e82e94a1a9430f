#!/usr/bin/env bash
# Progress counts input bytes as records are read (compressed bytes for
# compressed inputs), not as whole files finish: with one input per rank,
# small rounds and a progress line after every round (--progress 0.001),
# the first line must already show bytes done, and every line's bytes and
# percentage must be at least the line's before, and grow. Run for a
# zstd, a gzip and a plain corpus. Asserts on counts, never on seconds.
# Usage: progress_lines.sh BINARY MPIEXEC
set -euo pipefail
bin=$1
mpiexec=$2
tmp=$(mktemp -d /tmp/bloomshard-progress-lines.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

check_lines() { # LOG NAME: the progress lines of one run
  local log=$1 name=$2
  grep '^progress: ' "$log" >"$tmp/$name.lines" || true
  local n
  n=$(wc -l <"$tmp/$name.lines")
  ((n >= 3)) || { cat "$log"; fail "$name: $n progress lines, want >= 3 (one per round)"; }
  head -n 3 "$tmp/$name.lines"
  echo "... ($n lines)"
  awk -v name="$name" '
    match($0, /input [0-9.]+\/[0-9.]+ MiB \([0-9.]+%\)/) {
      s = substr($0, RSTART + 6, RLENGTH - 6)  # "DONE/TOTAL MiB (P%)"
      split(s, a, /[\/ (%)]+/)
      done = a[1] + 0; pct = a[4] + 0
      if (NR == 1) { first_done = done; first_pct = pct }
      if (NR == 1 && done <= 0 && pct <= 0) {
        print name ": first line shows no bytes done: " $0; bad = 1
      }
      if (NR > 1 && (done < last_done || pct < last_pct)) {
        print name ": progress went back: " prev " -> " $0; bad = 1
      }
      last_done = done; last_pct = pct; prev = $0; next
    }
    { print name ": no input bytes in: " $0; bad = 1 }
    END {
      if (!bad && last_done <= first_done && last_pct <= first_pct) {
        print name ": bytes done never grew: " prev; bad = 1
      }
      exit bad
    }' "$tmp/$name.lines" || fail "$name: progress lines do not count bytes as they are read"
}

for compress in zst gz none; do
  "$bin" synth --records 120000 --dup-rate 0.3 --files 2 --compress "$compress" \
    --out "$tmp/in-$compress" >/dev/null
  # 2 files on 2 ranks: each rank reads one file, which finishes only at
  # the end; 64 KiB rounds give dozens of rounds, each printing a line.
  "$mpiexec" -n 2 "$bin" dedup --input "$tmp/in-$compress" --output "$tmp/out-$compress" \
    --key-field id --batch-bytes 65536 --progress 0.001 --progress-style lines \
    >"$tmp/$compress.out" 2>"$tmp/$compress.log" ||
    { cat "$tmp/$compress.log"; fail "$compress: dedup failed"; }
  check_lines "$tmp/$compress.log" "$compress"
done
echo "progress lines count bytes as they are read: ok"
