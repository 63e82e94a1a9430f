#!/usr/bin/env bash
# End to end: `dedup --unit minhash --confirm-jaccard 0.8 --window 1` (per-run
# slots) on minhash_window_corpus.py's three runs: the near copies inside
# the window are removed (confirmed: one word changed), A1 (its original A
# expired) kept, as the window rule says; and the state's forms follow the
# slots (minhash_window_forms.py): B's keys refreshed into slot 1 by B1 keep
# B's form after slot 0 expires, A's keys are forgotten with slot 0 and take
# A1's form when A1 inserts them again. The same inputs in one run with
# --slot-records 32 (a record per round): the forgetting at round ends,
# checked the same way.
#
# usage: minhash_window_confirm_case.sh --ranks N --bin BLOOMSHARD --dir TESTS_E2E
#                                       [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse minhash_window_confirm_case.sh "--ranks=RANKS:1 --bin=BIN* --dir=DIR*" "$@"
CORPUS=$DIR/minhash_window_corpus.py
[[ -f $CORPUS ]] || harness_usage "no minhash_window_corpus.py in --dir $DIR"
"$PY" -c "import numpy, xxhash, h5py" 2>/dev/null || harness_usage "--python $PY lacks numpy, xxhash or h5py (use /usr/bin/python3)"
harness_tmp "minhash-window-confirm-$RANKS" "minhash window confirm, $RANKS ranks"

"$PY" "$CORPUS" gen --out "$TMP/in" || fail "the corpus generator refused its seed"
done_runs=()
for r in 0 1 2; do
  rc=0
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$TMP/in/run-$r" \
    --output "$TMP/win-$r" --key-field text --unit minhash --state "$TMP/st" --window 1 \
    --confirm-jaccard 0.8 --slices 16 >"$TMP/win-$r.log" 2>&1 || rc=$?
  [[ $rc == 0 ]] || { cat "$TMP/win-$r.log" >&2; fail "run $r exited $rc (want 0)"; }
  # After each run: the live keys and their first forms.
  done_runs+=("$TMP/in/run-$r")
  "$PY" "$DIR/minhash_window_forms.py" "$TMP/st" --window 1 --inputs "${done_runs[@]}" ||
    fail "after run $r the state's forms do not follow the window"
done
got=$("$PY" "$CORPUS" check --window 1 --inputs "$TMP/in/run-"{0,1,2} --outputs "$TMP/win-"{0,1,2}) ||
  fail "the kept records differ from the window rule"
want=$'removed run-0: \nremoved run-1: B1\nremoved run-2: B2 C1'
[[ $got == "$want" ]] || fail "with --window 1 the rule removed '$got', want '$want'"
"$BIN" verify --state "$TMP/st" >"$TMP/verify.log" 2>&1 ||
  { cat "$TMP/verify.log" >&2; fail "the windowed confirming state does not verify"; }
log "--window 1 with --confirm-jaccard 0.8: B1, B2 and C1 removed, A1 kept; after each run the" \
  "state's forms are the first records' since the keys entered the window; verify passes"

# Slots that end inside a run (--slot-records): the forgetting runs at
# round ends (SlotClock::open_next from the round loop, not from start).
# One run over the three inputs, each record padded past --batch-bytes so
# that a round reads one record (one reader: --split-inputs off) and a slot
# is exactly 32 records; the state's forms are then checked as above against
# the slots cut from the same file (32, 32, 32 and the last record).
mkdir -p "$TMP/all"
cat "$TMP"/in/run-{0,1,2}/*.jsonl |
  "$PY" -c 'import json, sys
for line in sys.stdin:
    d = json.loads(line)
    d["pad"] = "x" * 4200
    print(json.dumps(d))' >"$TMP/all/part-000.jsonl"
for s in 0 1 2 3; do
  mkdir -p "$TMP/slot-$s"
  sed -n "$((s * 32 + 1)),$((s * 32 + 32))p" "$TMP/all/part-000.jsonl" >"$TMP/slot-$s/part-000.jsonl"
done
rc=0
"$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$TMP/all" \
  --output "$TMP/rec" --key-field text --unit minhash --state "$TMP/st-rec" --window 1 \
  --slot-records 32 --batch-bytes 4096 --split-inputs off --confirm-jaccard 0.8 --slices 16 \
  >"$TMP/rec.log" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$TMP/rec.log" >&2; fail "the --slot-records run exited $rc (want 0)"; }
"$BIN" info --json --state "$TMP/st-rec" >"$TMP/rec-info.json"
slot=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["current_slot"])' "$TMP/rec-info.json")
[[ $slot == 3 ]] || fail "the --slot-records run ended in slot $slot (want 3: slots of 32 records)"
"$PY" "$DIR/minhash_window_forms.py" "$TMP/st-rec" --window 1 --inputs "$TMP"/slot-{0,1,2,3} ||
  fail "after slots inside one run the state's forms do not follow the window"
"$BIN" verify --state "$TMP/st-rec" >"$TMP/verify-rec.log" 2>&1 ||
  { cat "$TMP/verify-rec.log" >&2; fail "the --slot-records confirming state does not verify"; }
log "--slot-records 32: slots 0..3 inside one run, every live key with its first form; verify passes"
