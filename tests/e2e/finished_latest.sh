#!/usr/bin/env bash
# A finished state without LATEST: what a kill between the rename of a
# first generation that finishes the run and LATEST's creation leaves (the
# window is microseconds wide; e2e.crash_torture's random kills found it). A
# start then takes the newest generation file (no LATEST: the newest) and
# finds the run finished. The state is made so by hand after a real
# finished run (LATEST removed). The same command started again says
# "already finished ... nothing to do", exits 0, leaves the outputs as they
# were, and writes LATEST naming the finished generation (info, query and
# readers use LATEST). (A LATEST that names an older generation is the
# commit point: the start resumes from it, as e2e.crash_torture checks.)
#
# usage: finished_latest.sh BIN [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse finished_latest.sh "BIN --ranks=RANKS:2" "$@"
harness_tmp finished-latest "finished LATEST, $RANKS ranks"
cd "$TMP" || exit 1

"$BIN" synth --records 6000 --dup-rate 0.3 --files 2 --compress none --seed 5 --out in >/dev/null
JOB=(dedup --input in --output out --state S --key-field id --batch-bytes 65536
  --checkpoint-rounds 1 --keep-generations 3 --progress 0)
run_job() { # LOG
  timeout 120 "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" "${JOB[@]}" >"$1" 2>&1
}
outputs_sum() { (cd out && find . -type f ! -name '_bloomshard_run*' -print0 | sort -z | xargs -0 sha1sum) | sha1sum; }

run_job first.log || fail "the run failed: $(cat first.log)"
G=$(cat S/LATEST)
before=$(outputs_sum)
for lag in none; do
  rm S/LATEST
  run_job "again-$lag.log" || fail "started again with LATEST $lag: $(cat "again-$lag.log")"
  grep -q "already finished for these inputs; nothing to do" "again-$lag.log" ||
    fail "LATEST $lag: not 'already finished': $(cat "again-$lag.log")"
  [[ -f S/LATEST && $(cat S/LATEST) == "$G" ]] ||
    fail "LATEST $lag: the start left LATEST at '$(cat S/LATEST 2>/dev/null)', the finished generation is $G"
  [[ $(outputs_sum) == "$before" ]] || fail "LATEST $lag: the outputs changed"
  log "no LATEST: nothing to do, LATEST names generation $G again"
done
log "ok"
