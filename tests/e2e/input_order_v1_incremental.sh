#!/usr/bin/env bash
# An incremental run (new inputs, another --output) on a `--kept-copy first`
# state that started as version 1 (the checked-in fixture
# tests/data/input_order_v1_state: kept copies as the manifest's JSON list,
# the input-order/v1 mark): the fixture is resumed to its end on 2 ranks,
# then new inputs (some keys of the old ones, some new, copies differing in
# other fields) are run on top of the finished state on 3 ranks. Every new
# output holds exactly the first copies in input order of the keys the old
# run had not seen (input_order_corpus.py check-after), and the state
# verifies after each step.
#
# usage: input_order_v1_incremental.sh BLOOMSHARD E2E_DIR FIXTURE_TAR_GZ
#                                      [--mpiexec M] [--np-flag F] [--python P]
# The fixture's run identity holds fixed absolute paths, so it is unpacked at
# /tmp/bloomshard-order-v1-fixture (shared with e2e.input_order_v1_state:
# a resource lock keeps the two apart; removed at the end).
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_order_v1_incremental.sh "BIN EDIR ARCHIVE" "$@"
ROOT=/tmp/bloomshard-order-v1-fixture
harness_label "input-order v1 state, incremental"
harness_tmp_at "$ROOT"
tar -C "$ROOT" -xzf "$ARCHIVE"
h5dump -a /normalization "$ROOT/st/ckpt-$(cat "$ROOT/st/LATEST").h5" | grep -q "input-order/v1" ||
  fail "the fixture lacks the v1 mark"

mpi 2 dedup --input "$ROOT/in" --key-field id --kept-copy first --batch-bytes 65536 \
  --split-min-bytes 65536 --progress 0 --output "$ROOT/out" --state "$ROOT/st" \
  --checkpoint-rounds 3 >"$ROOT/resume.log" 2>&1 || fail "the resume failed: $(cat "$ROOT/resume.log")"
"$PY" "$EDIR/input_order_corpus.py" check "$ROOT/in" "$ROOT/out" ||
  fail "the resumed run: not the first copies in input order"
log "the v1 state resumed to its end on 2 ranks"

incremental_first_copies "$ROOT" "$EDIR" 3 23
log "incremental run on 3 ranks: the first copies of the new keys in input order"

mpi 2 verify --state "$ROOT/st" >"$ROOT/verify.log" 2>&1 ||
  fail "verify after the incremental run: $(cat "$ROOT/verify.log")"
log "the state verifies after the incremental run"
log PASS
