#!/usr/bin/env bash
# A `--kept-copy first` state written before the kept copies became rows of
# the generation (input_order version 1: the JSON `kept` list in the
# manifest, the input-order/v1 mark) still resumes: the checked-in fixture
# tests/data/input_order_v1_state (made by its make_fixture.sh with the
# build of e3316e6: 2 ranks, stopped after its first checkpoint with 1,737
# remembered kept copies) is resumed by this build on 3 ranks. Every output
# is byte for byte this build's 1-rank stateless run's, the first copies in
# input order (input_order_corpus.py check) and exactly once (oracle.py);
# the generations this resume writes are version 3 (rows, input-order/v3
# mark) and verify.
#
# usage: input_order_v1_state.sh BLOOMSHARD E2E_DIR FIXTURE_TAR_GZ
#                                [--mpiexec M] [--np-flag F] [--python P]
# The fixture's run identity holds fixed absolute paths, so it is unpacked at
# /tmp/bloomshard-order-v1-fixture (this test's own directory; removed at the end).
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_order_v1_state.sh "BIN EDIR ARCHIVE" "$@"
ROOT=/tmp/bloomshard-order-v1-fixture
harness_label "input-order v1 state"
harness_tmp_at "$ROOT"
tar -C "$ROOT" -xzf "$ARCHIVE"
ARGS=(--input "$ROOT/in" --key-field id --kept-copy first --batch-bytes 65536
  --split-min-bytes 65536 --progress 0)
latest() { echo "$ROOT/st/ckpt-$(cat "$ROOT/st/LATEST").h5"; }

"$BIN" info --json --state "$ROOT/st" >"$ROOT/info.json"
saved=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["input_order_saved_as"], d["input_order_remembered"])' "$ROOT/info.json")
[[ $saved == "manifest 1737" ]] ||
  { cat "$ROOT/info.json" >&2; fail "the fixture is not a version-1 state with its 1737 kept copies listed ($saved)"; }
h5dump -a /normalization "$(latest)" | grep -q "input-order/v1" || fail "the fixture lacks the v1 mark"

mpi 1 dedup "${ARGS[@]}" --output "$ROOT/out1" >"$ROOT/r1.log" 2>&1 ||
  fail "the 1-rank stateless run failed: $(cat "$ROOT/r1.log")"
mpi 3 dedup "${ARGS[@]}" --output "$ROOT/out" --state "$ROOT/st" --checkpoint-rounds 3 \
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
log PASS
