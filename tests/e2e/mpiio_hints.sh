#!/usr/bin/env bash
# `dedup --mpiio-hints` through the real binary on 1 rank (the parser and
# set_mpiio_hints have unit tests in tests/io_mpi; no other test passes the
# option to a job):
#  1. a hint that is not key=value: refused with exit 2 before any work,
#     naming it; neither the output dir nor the state dir is created;
#  2. hints with --checkpoint-io mpiio (the checkpoints written through
#     MPI-IO, under those hints): exit 0, the outputs equal those of the
#     same job without hints, and `verify` passes the state.
# Whether MPI-IO acts on a hint is not observable here (ROMIO accepts and
# may ignore any key); what is checked is that giving them changes nothing
# else and that a malformed one never starts a job.
#
# usage: mpiio_hints.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse mpiio_hints.sh "BIN" "$@"
harness_tmp mpiio-hints "mpiio hints"
cd "$TMP" || exit 1

"$BIN" synth --records 2000 --dup-rate 0.3 --files 2 --compress none --seed 9 --out in >/dev/null
run() { dedup_1rank "$1" --input in "${@:2}"; }  # LOG ARGS...: harness.sh

run bad.log --output out-bad --state S-bad --mpiio-hints cb_nodes=1,striping_factor
((RC == 2)) || { cat bad.log >&2; fail "1: exit $RC, want 2"; }
grep -qF "bloomshard dedup: --mpiio-hints: MPI-IO hint 'striping_factor' is not key=value" bad.log ||
  { cat bad.log >&2; fail "1: the refusal does not name the hint"; }
[[ ! -e out-bad && ! -e S-bad ]] || fail "1: the refused job created its output or state dir"
log "1. a malformed hint: refused (exit 2) naming it, nothing created"

run hints.log --output out-hints --state S-hints --checkpoint-io mpiio \
  --mpiio-hints cb_buffer_size=1048576,romio_cb_write=enable
((RC == 0)) || { cat hints.log >&2; fail "2: with hints: exit $RC"; }
run plain.log --output out-plain --state S-plain --checkpoint-io mpiio
((RC == 0)) || { cat plain.log >&2; fail "2: without hints: exit $RC"; }
diff -r -x '_*' out-hints out-plain >/dev/null || fail "2: the outputs differ with the hints"
"$BIN" verify --state S-hints >verify.log 2>&1 || { cat verify.log >&2; fail "2: verify refused the state"; }
log "2. hints with --checkpoint-io mpiio: the same outputs as without, a state that verifies"
log "ok"
