#!/usr/bin/env bash
# A `--kept-copy first` state written before the retractions became rows of
# the generation (input_order version 2: the kept copies as /input_order/rows,
# the retractions waiting for the end pass as the manifest's JSON
# `retracted` list, the input-order/v2 mark) still resumes: the checked-in
# fixture tests/data/input_order_v2_state (made by its make_fixture.sh with
# the build of dcc7a85: 2 ranks, stopped after its first checkpoint with kept
# copies and retractions waiting) is resumed by this build on 3 ranks. Every
# output is byte for byte this build's 1-rank stateless run's (so every
# retraction the old state listed left its output exactly once, whichever
# rank restored it), the first copies in input order (input_order_corpus.py
# check) and exactly once (oracle.py); the generations this resume writes
# are version 3 (input-order/v3 mark) and verify; an incremental run of new
# inputs on top of it on 2 ranks keeps the first copies in input order of
# the keys new to the state (input_order_corpus.py check-after).
#
# usage: input_order_v2_state.sh BLOOMSHARD E2E_DIR FIXTURE_TAR_GZ
#                                [--mpiexec M] [--np-flag F] [--python P]
# The fixture's run identity holds fixed absolute paths, so it is unpacked at
# /tmp/bloomshard-order-v2-fixture (this test's own directory; removed at the end).
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_order_v2_state.sh "BIN EDIR ARCHIVE" "$@"
ROOT=/tmp/bloomshard-order-v2-fixture
harness_label "input-order v2 state"
harness_tmp_at "$ROOT"
tar -C "$ROOT" -xzf "$ARCHIVE"
ARGS=(--input "$ROOT/in" --key-field id --kept-copy first --batch-bytes 65536 --progress 0)
latest() { echo "$ROOT/st/ckpt-$(cat "$ROOT/st/LATEST").h5"; }

"$BIN" info --json --state "$ROOT/st" >"$ROOT/info.json"
saved=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["input_order_saved_as"], d["input_order_remembered"] > 0, d["input_order_retracted"] > 0)' "$ROOT/info.json")
[[ $saved == "rows True True" ]] ||
  { cat "$ROOT/info.json" >&2; fail "the fixture is not a version-2 state with kept rows and retractions waiting ($saved)"; }
h5dump -a /normalization "$(latest)" | grep -q "input-order/v2" || fail "the fixture lacks the v2 mark"
h5dump -d /manifest_json "$(latest)" | grep -q '"retracted":\[[0-9]' ||
  fail "the fixture's manifest lists no retraction"

mpi 1 dedup "${ARGS[@]}" --output "$ROOT/out1" >"$ROOT/r1.log" 2>&1 ||
  fail "the 1-rank stateless run failed: $(cat "$ROOT/r1.log")"
mpi 3 dedup "${ARGS[@]}" --output "$ROOT/out" --state "$ROOT/st" --checkpoint-rounds 2 \
  >"$ROOT/resume.log" 2>&1 || fail "the resume failed: $(cat "$ROOT/resume.log")"
grep -q "resuming checkpoint generation 1" "$ROOT/resume.log" ||
  fail "the run did not resume generation 1: $(cat "$ROOT/resume.log")"

"$PY" "$EDIR/input_order_corpus.py" check "$ROOT/in" "$ROOT/out" ||
  fail "not the first copies in input order"
"$PY" "$EDIR/oracle.py" --input "$ROOT/in" --output "$ROOT/out" --key-field id \
  >"$ROOT/oracle.txt" 2>&1 || fail "the exactly-once oracle: $(tail -3 "$ROOT/oracle.txt")"
same_output_bytes "$ROOT/out1" "$ROOT/out" "resumed on 3 ranks" "the 1-rank run"
log "resumed on 3 ranks: every output the 1-rank run's bytes, first copies, exactly once"

h5dump -a /normalization "$(latest)" | grep -q "input-order/v3" ||
  fail "the generations after the resume lack the input-order/v3 mark"
mpi 2 verify --state "$ROOT/st" >"$ROOT/verify.log" 2>&1 ||
  fail "verify of the state after the resume: $(cat "$ROOT/verify.log")"
log "the state written after the resume is version 3 and verifies"

# An incremental run on top of it on 2 ranks: the first copies in input
# order of the keys new to the state.
incremental_first_copies "$ROOT" "$EDIR" 2 29
log "incremental run on 2 ranks on the resumed v2 state: the first copies of the new keys"
log PASS
