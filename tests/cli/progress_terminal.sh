#!/usr/bin/env bash
# The progress bar as a person sees it: `mpiexec -n 2 bloomshard dedup` runs
# in a real terminal (a tmux pane); the screen must show the final bar on a
# line of its own, then the summary. The same job with stderr sent to a file
# (a Slurm log) must write no carriage return and no escape there.
# Usage: progress_terminal.sh BINARY MPIEXEC
set -euo pipefail
bin=$1
mpiexec=$2
tmp=$(mktemp -d /tmp/bloomshard-progress.XXXXXX)
session="bloomshard-progress-$$"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" synth --records 300000 --dup-rate 0.3 --files 2 --out "$tmp/in" >/dev/null
cat >"$tmp/run.sh" <<RUN
"$mpiexec" -n 2 "$bin" dedup --input "$tmp/in" --output "$tmp/out-tty"
echo "EXIT=\$?" >"$tmp/exit"
sleep 600
RUN
tmux new-session -d -s "$session" -x 200 -y 30 "bash $tmp/run.sh"
for _ in $(seq 1 600); do
  [[ -s $tmp/exit ]] && break
  sleep 0.1
done
[[ -s $tmp/exit ]] || { echo "the job in the terminal did not end within 60 s" >&2; exit 1; }
grep -qx "EXIT=0" "$tmp/exit" || { echo "job in the terminal: $(cat "$tmp/exit")" >&2; exit 1; }
tmux capture-pane -p -t "$session" >"$tmp/screen"
cat "$tmp/screen"
grep -qE '^\[#{30}\] 100\.0% 300\.0k rec .* dup 30\.0% ETA 0s$' "$tmp/screen" ||
  { echo "no final progress bar on the screen" >&2; exit 1; }
grep -A1 -E '^\[#{30}\]' "$tmp/screen" | tail -n1 | grep -q '^bloomshard dedup: 300000 records' ||
  { echo "the summary does not start on the line after the bar" >&2; exit 1; }

# Not a terminal: --progress lines only, nothing drawn in place.
"$mpiexec" -n 2 "$bin" dedup --input "$tmp/in" --output "$tmp/out-log" --progress 0.05 \
  >"$tmp/stdout.log" 2>"$tmp/stderr.log"
if grep -q $'\r\|\x1b' "$tmp/stderr.log"; then
  echo "carriage return or escape in a log file" >&2
  exit 1
fi
grep -q '^progress: ' "$tmp/stderr.log" || echo "note: the job was faster than one --progress interval"
echo "progress in a terminal and in a log: ok"
