#!/usr/bin/env bash
# A start refuses a checkpoint whose header disagrees with itself or with
# this build, through the real binary, on states a build never writes
# (bloomshard_ckpt_patch rewrites one root attribute of a real generation):
#  - a key_scheme attribute this build cannot parse;
#  - a normalization text whose Unicode version differs (same policy);
#  - no split-inputs mark on an unfinished state whose manifest has a
#    split input, the v1 mark on one whose manifest lists retracted records
#    (v2), a mark on a state whose manifest has no split input;
#  - the input-order/v3 mark off a --kept-copy first state, back to v2 or v1,
#    or on an arrival-order one.
# Each: exit 2 before any work, "cannot use the checkpoint in 'S': " and
# the reason, the outputs and the state's files as they were.
#
# usage: state_mark_refusals.sh BIN PATCH [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse state_mark_refusals.sh "BIN PATCH" "$@"
[[ -x $PATCH ]] || harness_usage "PATCH '$PATCH' is not an executable"
PATCH=$(readlink -f "$PATCH")
harness_tmp state-mark-refusals "state mark refusals"
cd "$TMP" || exit 1

"$BIN" synth --records 1200 --dup-rate 0.3 --files 1 --compress none --seed 11 --out in >/dev/null
run() { # LOG RANKS ARGS...: the job's exit status in RC
  local log=$1 ranks=$2
  shift 2
  RC=0
  timeout 120 "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --input in \
    --key-field id --progress 0 "$@" >"$log" 2>&1 || RC=$?
}
attr() { # FILE NAME: a root attribute's string value
  h5dump -a "/$2" "$1" | sed -n 's/^ *(0): "\(.*\)"$/\1/p'
}
# A copy of state $1 as $2 (its outputs $1's), generation file $3 patched:
# attribute $4 set to $5; LATEST names that generation.
patched_copy() {
  rm -rf "$2"
  cp -a "$1" "$2"
  "$PATCH" "$2/$3" "$4" "$5" || fail "ckpt_patch $2/$3 $4"
  local g=${3#ckpt-}
  echo "${g%.h5}" >"$2/LATEST"
}
# Refused with exit 2 naming WHY, before any work: outputs and state unchanged.
expect_refusal() { # CASE STATE OUT WHY [JOB ARGS...]: on 1 rank
  local name=$1 state=$2 out=$3 why=$4
  shift 4
  local before
  before=$(cd "$TMP" && find "$out" "$state" -type f -exec sha256sum {} + | sort)
  run "$name.log" 1 --output "$out" --state "$state" "$@"
  ((RC == 2)) || { cat "$name.log" >&2; fail "$name: exit $RC, want 2"; }
  grep -qF "cannot use the checkpoint in '$state': $why" "$name.log" ||
    { cat "$name.log" >&2; fail "$name: no refusal saying '$why'"; }
  [[ $(cd "$TMP" && find "$out" "$state" -type f -exec sha256sum {} + | sort) == "$before" ]] ||
    fail "$name: the refused start changed the outputs or the state"
  log "$name: refused (exit 2)"
}

# One split run with a key scheme (nfc: its Unicode version is part of the
# normalization text) that writes a generation after every round and keeps
# them all: its last generation is a finished state without split inputs,
# its first an unfinished one with a split input. In the arrival order, where
# a split input keeps its own file order (retracted records in its ranges:
# the split-inputs/v2 mark; a first-copy state carries input-order/v1 too).
JOB=(--output out --state S --normalize nfc --key-digest xxh3-128 --kept-copy arrival)
SPLIT=(--split-min-bytes 16384 --batch-bytes 32768 --checkpoint-rounds 1 --keep-generations 100)
run split.log 2 "${JOB[@]}" "${SPLIT[@]}"
((RC == 0)) || { cat split.log >&2; fail "the split run failed ($RC)"; }
grep -q "joined the ranges of 1 split input" split.log || { cat split.log >&2; fail "the input was not split"; }
G=$(cat S/LATEST)
GEN=ckpt-$G.h5
((G > 2)) && [[ -f S/$GEN && -f S/ckpt-1.h5 ]] || fail "want generations 1 to > 2 kept, have: $(ls S)"
NORM=$(attr "S/$GEN" normalization)
[[ $NORM == "nfc/v1 unicode "*" key-scheme/v1 split-inputs/v2" ]] || fail "normalization of S/$GEN: '$NORM'"
NORM=${NORM% split-inputs/v2}
[[ $(attr S/ckpt-1.h5 normalization) == "$NORM split-inputs/v1" ]] ||
  fail "generation 1 has not the v1 split mark: '$(attr S/ckpt-1.h5 normalization)'"

patched_copy S S-scheme "$GEN" key_scheme "fields=id; unit=sentence"
expect_refusal scheme S-scheme out "key scheme unreadable: " "${JOB[@]:4}"

OTHER_UNICODE=$(sed 's/unicode [0-9.]*/unicode 9.0.0/' <<<"$NORM")
[[ $OTHER_UNICODE != "$NORM" ]] || fail "cannot change the Unicode version in '$NORM'"
patched_copy S S-unicode "$GEN" normalization "$OTHER_UNICODE split-inputs/v2"
expect_refusal unicode S-unicode out "normalization differs: checkpoint '$OTHER_UNICODE', this job '$NORM'" "${JOB[@]:4}"

patched_copy S S-v1 "$GEN" normalization "$NORM split-inputs/v1"
expect_refusal retracted S-v1 out "its manifest has retracted records but its normalization text lacks the split-inputs/v2 mark" "${JOB[@]:4}"

patched_copy S S-unmarked ckpt-1.h5 normalization "$NORM"
expect_refusal unmarked S-unmarked out "its manifest has split inputs but its normalization text lacks the split-inputs mark" "${JOB[@]:4}" "${SPLIT[@]}"
# A state without split inputs (one rank splits nothing) given the mark.
run plain.log 1 --output out-plain --state Q --kept-copy arrival
((RC == 0)) || { cat plain.log >&2; fail "the plain run failed ($RC)"; }
QGEN=ckpt-$(cat Q/LATEST).h5
QNORM=$(attr "Q/$QGEN" normalization)
[[ $QNORM != *split-inputs* ]] || fail "the 1-rank run has a split mark: '$QNORM'"
patched_copy Q Q-marked "$QGEN" normalization "$QNORM split-inputs/v1"
expect_refusal marked Q-marked out-plain "its manifest lacks split inputs but its normalization text has the split-inputs mark"
# --kept-copy first: the input-order/v3 mark taken off a state whose manifest
# has the input_order object, and given to one (Q) without it.
run first.log 1 --output out-first --state F --kept-copy first
((RC == 0)) || { cat first.log >&2; fail "the --kept-copy first run failed ($RC)"; }
FGEN=ckpt-$(cat F/LATEST).h5
FNORM=$(attr "F/$FGEN" normalization)
[[ $FNORM == *" input-order/v3" ]] || fail "the --kept-copy first state has no input-order mark: '$FNORM'"
patched_copy F F-unmarked "$FGEN" normalization "${FNORM% input-order/v3}"
expect_refusal order_unmarked F-unmarked out-first "its manifest has an input_order object but its normalization text lacks the input-order mark" --kept-copy first
# The mark taken back to v2 and to v1 (a manifest of version 3 under them).
patched_copy F F-v2 "$FGEN" normalization "${FNORM% input-order/v3} input-order/v2"
expect_refusal order_v2 F-v2 out-first "its manifest's input_order is version 3 but its normalization text has the input-order/v2 mark" --kept-copy first
patched_copy F F-v1 "$FGEN" normalization "${FNORM% input-order/v3} input-order/v1"
expect_refusal order_v1 F-v1 out-first "its manifest's input_order is version 3 but its normalization text has the input-order/v1 mark" --kept-copy first
patched_copy Q Q-order "$QGEN" normalization "$QNORM input-order/v3"
expect_refusal order_marked Q-order out-plain "its manifest lacks an input_order object but its normalization text has the input-order mark"
log "ok"
