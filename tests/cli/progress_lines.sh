#!/usr/bin/env bash
# Progress counts input bytes as records are read (compressed bytes for
# compressed inputs), not as whole files finish: with one input per rank,
# small rounds and a progress line after every round (--progress 0.001),
# the first line must already show bytes done, and every line's bytes and
# percentage must be at least the line's before, and grow. Run for a
# zstd, a gzip and a plain corpus. Asserts on counts, never on seconds.
# usage: progress_lines.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse progress_lines.sh "BIN" "$@"
harness_tmp progress-lines "progress_lines"

check_lines() { # LOG NAME: the progress lines of one run
  local log=$1 name=$2
  grep '^progress: ' "$log" >"$TMP/$name.lines" || true
  local n
  n=$(wc -l <"$TMP/$name.lines")
  ((n >= 3)) || { cat "$log"; fail "$name: $n progress lines, want >= 3 (one per round)"; }
  head -n 3 "$TMP/$name.lines"
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
    }' "$TMP/$name.lines" || fail "$name: progress lines do not count bytes as they are read"
}

for compress in zst gz none; do
  "$BIN" synth --records 120000 --dup-rate 0.3 --files 2 --compress "$compress" \
    --out "$TMP/in-$compress" >/dev/null
  # 2 files on 2 ranks: each rank reads one file, which finishes only at
  # the end; 64 KiB rounds give dozens of rounds, each printing a line.
  "$MPIEXEC" "$NP_FLAG" 2 "$BIN" dedup --input "$TMP/in-$compress" --output "$TMP/out-$compress" \
    --key-field id --batch-bytes 65536 --progress 0.001 --progress-style lines \
    >"$TMP/$compress.out" 2>"$TMP/$compress.log" ||
    { cat "$TMP/$compress.log"; fail "$compress: dedup failed"; }
  check_lines "$TMP/$compress.log" "$compress"
done
echo "progress lines count bytes as they are read: ok"
