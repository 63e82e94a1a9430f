#!/usr/bin/env bash
# Every rank must own a slice: a job on more ranks than --slices is refused
# through the real binary with exit 2 and a message that names both counts,
# before any record is read or written (no output file, no checkpoint); the
# same command on as many ranks as slices then runs, since the refused
# start left the state its own.
#
# usage: slices_per_rank.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse slices_per_rank.sh "BIN" "$@"
harness_tmp slices-per-rank "slices per rank"
cd "$TMP" || exit 1

mkdir in
printf '{"id":"a"}\n{"id":"b"}\n{"id":"a"}\n' >in/x.jsonl
JOB=(dedup --input in --output out --state S --key-field id --slices 2)
rc=0
timeout 120 "$MPIEXEC" "$NP_FLAG" 3 --oversubscribe "$BIN" "${JOB[@]}" >refused.log 2>&1 || rc=$?
[[ $rc == 2 ]] || { cat refused.log >&2; fail "3 ranks, 2 slices: exit $rc, want 2"; }
grep -q "2 slices for 3 ranks; every rank must own a slice" refused.log ||
  { cat refused.log >&2; fail "the refusal does not name the counts"; }
[[ ! -e out/x.jsonl ]] || fail "the refused job wrote out/x.jsonl"
[[ ! -e S/LATEST ]] || fail "the refused job wrote a checkpoint"

timeout 120 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" "${JOB[@]}" >run.log 2>&1 ||
  { cat run.log >&2; fail "2 ranks, 2 slices after the refusal: exit $?, want 0"; }
[[ $(cat out/x.jsonl) == $'{"id":"a"}\n{"id":"b"}' ]] || fail "out/x.jsonl: $(cat out/x.jsonl)"
log "ok"
