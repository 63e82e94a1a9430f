#!/usr/bin/env bash
# The progress bar as a person sees it: `mpiexec -n 2 bloomshard dedup` runs
# in a real terminal (a tmux pane); the screen must show the final bar on a
# line of its own, then the summary. The same job with stderr sent to a file
# (a Slurm log) must write no carriage return and no escape there.
# usage: progress_terminal.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse progress_terminal.sh "BIN" "$@"
harness_tmp progress "progress_terminal"
session="bloomshard-progress-$$"
harness_on_exit 'tmux kill-session -t "$session" 2>/dev/null'

"$BIN" synth --records 300000 --dup-rate 0.3 --files 2 --out "$TMP/in" >/dev/null
cat >"$TMP/run.sh" <<RUN
"$MPIEXEC" "$NP_FLAG" 2 "$BIN" dedup --input "$TMP/in" --output "$TMP/out-tty"
echo "EXIT=\$?" >"$TMP/exit"
sleep 600
RUN
tmux new-session -d -s "$session" -x 200 -y 30 "bash $TMP/run.sh"
for _ in $(seq 1 600); do
  [[ -s $TMP/exit ]] && break
  sleep 0.1
done
[[ -s $TMP/exit ]] || fail "the job in the terminal did not end within 60 s"
grep -qx "EXIT=0" "$TMP/exit" || fail "job in the terminal: $(cat "$TMP/exit")"
tmux capture-pane -p -t "$session" >"$TMP/screen"
cat "$TMP/screen"
grep -qE '^\[#{30}\] 100\.0% 300\.0k rec .* dup 30\.0% ETA 0s$' "$TMP/screen" ||
  fail "no final progress bar on the screen"
grep -A1 -E '^\[#{30}\]' "$TMP/screen" | tail -n1 | grep -q '^bloomshard dedup: 300000 records' ||
  fail "the summary does not start on the line after the bar"

# Not a terminal: --progress lines only, nothing drawn in place.
"$MPIEXEC" "$NP_FLAG" 2 "$BIN" dedup --input "$TMP/in" --output "$TMP/out-log" --progress 0.05 \
  >"$TMP/stdout.log" 2>"$TMP/stderr.log"
! grep -q $'\r\|\x1b' "$TMP/stderr.log" || fail "carriage return or escape in a log file"
grep -q '^progress: ' "$TMP/stderr.log" || echo "note: the job was faster than one --progress interval"
echo "progress in a terminal and in a log: ok"
