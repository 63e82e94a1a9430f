#!/usr/bin/env bash
# A broken input in a run without --state, through the real binary on 1
# rank: the job ends saying that nothing was saved, never as if a
# checkpoint could be resumed:
#  1. --on-input-error fail: exit 1, the input error (file, line, offset)
#     and "no --state, nothing saved, or run again with --on-input-error skip";
#  2. more broken inputs than --max-skipped-inputs 0: exit 3, the limit
#     named and "no --state, nothing saved" (no suggestion to skip).
#
# usage: input_error_stateless.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_error_stateless.sh "BIN" "$@"
harness_tmp input-error-stateless "input error without --state"
cd "$TMP" || exit 1

"$BIN" synth --records 3000 --dup-rate 0.3 --files 1 --compress gz --seed 5 --out in >/dev/null
GZ=in/part-00000.jsonl.gz
[[ -f $GZ ]] || fail "synth wrote no $GZ"
SIZE=$(stat -c %s "$GZ")
head -c $((SIZE / 2)) "$GZ" >cut.gz && mv cut.gz "$GZ"  # a gzip stream cut in its middle
run() { dedup_1rank "$1" --input in "${@:2}"; }  # LOG ARGS...: harness.sh

run fail.log --output out-fail --on-input-error fail
((RC == 1)) || { cat fail.log >&2; fail "1: exit $RC, want 1"; }
grep -q "rank 0: input error: $TMP/$GZ: line [0-9]* (decompressed offset [0-9]*): truncated gzip stream" \
  fail.log || { cat fail.log >&2; fail "1: no input error naming the file and line"; }
grep -qxF "bloomshard dedup: no --state, nothing saved, or run again with --on-input-error skip" \
  fail.log || { cat fail.log >&2; fail "1: the end does not say that nothing was saved"; }
log "1. --on-input-error fail without --state: exit 1, the input error, nothing saved"

run over.log --output out-over --max-skipped-inputs 0
((RC == 3)) || { cat over.log >&2; fail "2: exit $RC, want 3"; }
grep -qxF "bloomshard dedup: more broken inputs than --max-skipped-inputs 0 (the one over the limit is not skipped); no --state, nothing saved" \
  over.log || { cat over.log >&2; fail "2: the end does not name the limit and that nothing was saved"; }
log "2. over --max-skipped-inputs 0 without --state: exit 3, the limit named, nothing saved"
log "ok"
