#!/usr/bin/env bash
# An input whose file name is not valid UTF-8 cannot be recorded in a
# state's run manifest (JSON strings that must read back byte for byte):
# with --state the job is refused through the real binary with exit 2 and a
# message naming the file, before any record is read or written (no output
# file, no lock, no checkpoint). Without --state the same inputs run, and
# after a rename the --state job runs too.
#
# usage: input_name_not_utf8.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_name_not_utf8.sh "BIN" "$@"
harness_tmp input-name-utf8 "input name not UTF-8"
cd "$TMP" || exit 1

mkdir in
bad=$'in/bad\xff.jsonl'
printf '{"id":"a"}\n{"id":"b"}\n{"id":"a"}\n' >"$bad"
printf '{"id":"c"}\n' >in/good.jsonl
run() { timeout 120 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup --input in --key-field id "$@"; }

rc=0
run --output out --state S >refused.log 2>&1 || rc=$?
[[ $rc == 2 ]] || { cat refused.log >&2; fail "--state with a non-UTF-8 input name: exit $rc, want 2"; }
grep -qF "$TMP/$bad': its name is not valid UTF-8" refused.log ||
  { cat refused.log >&2; fail "the refusal does not name the file"; }
[[ ! -e out ]] || fail "the refused job wrote into out/"
[[ -z $(ls -A S 2>/dev/null) ]] || fail "the refused job wrote into the state: $(ls -A S)"

run --output plain >plain.log 2>&1 || { cat plain.log >&2; fail "without --state: exit $?, want 0"; }
[[ $(cat "plain/bad"$'\xff'".jsonl") == $'{"id":"a"}\n{"id":"b"}' ]] || fail "plain output: wrong records"

mv "$bad" in/renamed.jsonl
run --output out --state S >run.log 2>&1 || { cat run.log >&2; fail "after the rename: exit $?, want 0"; }
[[ $(cat out/renamed.jsonl out/good.jsonl) == $'{"id":"a"}\n{"id":"b"}\n{"id":"c"}' ]] ||
  fail "after the rename: wrong records"
log "ok"
