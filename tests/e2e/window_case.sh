#!/usr/bin/env bash
# End-to-end cases of rolling windows (`dedup --window N`) on
# the real binary under mpiexec, checked by window_oracle.py (Python only, no
# bloomshard code).
#
# usage: window_case.sh --case NAME --ranks "N [N...]" --bin BLOOMSHARD --oracle FILE
#                       [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
#                       [--ckpt-patch CKPT_PATCH]
# cases: runs     6 incremental runs (one slot each, two small files per run)
#                 with --window 3 on the given rank count(s) (a list: run r uses
#                 the (r mod len)-th count, so the state changes rank count
#                 between runs); after each run the kept keys equal the oracle's
#                 (not seen in the 3 runs before, nor earlier in the run);
#                 `info --json` lists the live slots with their ages and
#                 exactly the oracle's distinct keys per slot; `verify` passes;
#                 `query --emit hits` of run 0 hits exactly the live slots' keys;
#                 expired slots' run files are deleted; a changed window, a
#                 dropped window and a window on a plain state are refused
#        records  one run of 6000 fixed-length records on 1 rank with --window 2
#                 --slot-records 1000 and rounds of exactly 250 records: the
#                 output equals the oracle byte for byte; the state ends in
#                 slot 6 (opened when slot 5 filled) with slots 4..6 live; then
#                 the same records as two runs (3500 on 1 rank, 2500 on 3
#                 ranks) on a new state: slots go on across runs, same oracle
#        resume   an unfinished --slot-records run (ended by a broken input half
#                 way through a slot) resumed on 3 ranks: same oracle
#        slot_stop one --slot-records run stopped (SIGUSR1 through mpiexec) at
#                 the very round whose end fills slot 0 (a fault pause holds
#                 every rank before that round's agreement until the stop
#                 arrives), on the first rank count; exit 75, one generation:
#                 slot 0 full (1000 records) and not yet closed, the outputs
#                 exactly the oracle's first 1000 records; resumed on the
#                 second count: slot 0 closed exactly once, outputs and live
#                 slots equal to an unstopped run and to the oracle
#        annotate --mode annotate with --window 2 and --state: 4 incremental
#                 runs (per-run slots), each stopped mid-run (SIGUSR1 at its
#                 2nd round end) and resumed on the next rank count; the
#                 attribute files against the oracle: one line per input
#                 line in order, a duplicate exactly when the key occurred
#                 earlier in the run or in one of the 2 runs before
#        first    --kept-copy first --window 2 (one slot a run): 5 incremental
#                 runs of plain, .gz and .zst inputs on the given rank count
#                 (a list: run r on the (r mod len)-th); every output equals
#                 the oracle's first copies in the run of the keys new to the
#                 window (check --first-in-run) and, off 1 rank, the 1-rank
#                 runs' bytes (decompressed for .gz/.zst), with copies
#                 retracted; info lists the oracle's keys per live slot
#        first_kill  first, every run SIGKILLed at random moments (0-190 ms
#                 after a commit) on 1-4 ranks, at most 3 times, then run to
#                 its end on 1-4 ranks
#        first_split  first with 3 runs of two ~150 KB plain inputs split into
#                 ranges (--split-min-bytes 65536) off 1 rank
#        first_stop  the same, each run stopped (SIGUSR1 at its 2nd round
#                 end) or SIGKILLed (after its first checkpoint, or in the
#                 end pass before its generation or its renames) on one
#                 count and resumed on the next of the list
#        first_annotate  first_stop in --mode annotate on plain inputs with
#                 rejects: check-annotate --first-in-run, and the attribute
#                 files byte for byte the 1-rank runs'
#        first_refusals  --kept-copy first with --slot-records or
#                 --slot-every: exit 2 naming the option, nothing written
#        first_switch  3 incremental runs of one windowed state (--window 2),
#                 the rule switched between runs: the default (first copy),
#                 --kept-copy arrival, the default again. Each run takes its
#                 own rule (an incremental run on a finished state is a new
#                 run): the windowed key sets match the oracle (check), the
#                 first-copy runs are byte for byte the 1-rank runs', the
#                 arrival run's state carries no input-order mark and the
#                 next run's does
#        seconds  --slot-every 1s inside one run on 1 rank, long enough (a
#                 checkpoint every round) to cross several 1 s boundaries: slots open by wall
#                 time (info: current slot >= 2, every live slot holds keys,
#                 their keys add up to tier 2); with --window 32 no slot can
#                 expire in a run this short, so the output must equal plain
#                 dedup's byte for byte (checked while current slot < 32)
#        format   the saved facts: a windowed generation stores its normalization
#                 with the ' window/v1' mark (what builds before windows compare
#                 whole, so they refuse it) and the window attribute; with the
#                 mark removed, or a window text of another version, this
#                 build refuses the state naming why (ckpt_patch rewrites them)
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse window_case.sh \
  "--case=CASE* --ranks=RANK_LIST:1 --bin=BIN* --oracle=ORACLE* --ckpt-patch=PATCH" "$@"
[[ -f $ORACLE ]] || harness_usage "no oracle at $ORACLE"
read -r -a RANKS <<<"$RANK_LIST"
harness_tmp "window-$CASE" "window $CASE, ranks ${RANK_LIST}"

run_ok() { # LOG RANKS args...: must exit 0
  local logf=$1 n=$2
  shift 2
  local rc=0
  "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$BIN" "$@" >"$logf" 2>&1 || rc=$?
  [[ $rc == 0 ]] || { cat "$logf" >&2; fail "'$*' on $n ranks exited $rc (want 0)"; }
}

run_refused() { # LOG WORDS RANKS args...: must exit 2 (usage) naming WORDS
  local logf=$1 words=$2 n=$3
  shift 3
  local rc=0
  "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$BIN" "$@" >"$logf" 2>&1 || rc=$?
  [[ $rc == 2 ]] || { cat "$logf" >&2; fail "'$*' exited $rc (want 2)"; }
  local text
  text=$(cat "$logf")
  [[ $text == *"$words"* ]] || { cat "$logf" >&2; fail "the refusal does not say '$words'"; }
}

case_runs() {
  local runs=6 window=3
  "$PY" "$ORACLE" gen --out "$TMP/in" --runs $runs --records 1500 --seed 13
  local state=$TMP/state inputs=() outputs=()
  for ((r = 0; r < runs; r++)); do
    local n=${RANKS[$((r % ${#RANKS[@]}))]}
    inputs+=("$TMP/in/run-$r")
    outputs+=("$TMP/out-$r")
    # Small --max-delta-bytes is not allowed below 1 MiB; --checkpoint-rounds 1
    # with small batches gives several runs per slot (compaction inside a slot).
    run_ok "$TMP/run-$r.log" "$n" dedup --input "$TMP/in/run-$r" --output "$TMP/out-$r" \
      --key-field id --state "$state" --window $window --batch-bytes 32768 \
      --checkpoint-rounds 1 --compaction-fanout 2
    local got
    got=$("$PY" "$ORACLE" check --window $window --inputs "${inputs[@]}" \
      --outputs "${outputs[@]}" 2>"$TMP/check-$r.err") ||
      { cat "$TMP/check-$r.err" >&2; fail "run $r (on $n ranks) differs from the oracle"; }
    echo "$got" >"$TMP/oracle-$r.json"
    log "run $r on $n ranks: $got"
  done
  "$BIN" info --state "$state" --json >"$TMP/info.json"
  "$BIN" info --state "$state" >"$TMP/info.txt"
  "$PY" - "$TMP/info.json" "$TMP/oracle-$((runs - 1)).json" $runs $window <<'PYEOF' ||
import json, sys
info, oracle = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
runs, window = int(sys.argv[3]), int(sys.argv[4])
assert info["window"] == f"window/v1; slots={window}; slot=run", info["window"]
assert info["current_slot"] == runs - 1, info["current_slot"]
slots = info["slots"]
live = list(range(runs - 1 - window, runs))
assert [s["slot"] for s in slots] == live, [s["slot"] for s in slots]
for s in slots:
    assert s["age"] == runs - 1 - s["slot"], s
    assert s["keys"] == oracle["slot_keys"][str(s["slot"])], (s, oracle["slot_keys"])
    assert s["layers"] >= 1 and s["runs"] >= 1 and s["file_bytes"] > 0, s
assert info["exact_keys"] == sum(s["keys"] for s in slots)
PYEOF
    { cat "$TMP/info.json" >&2; fail "info does not list the oracle's slots"; }
  local text
  text=$(cat "$TMP/info.txt")
  [[ $text == *"slot 2    age 3"* ]] || { cat "$TMP/info.txt" >&2; fail "info text lacks the slots"; }
  run_ok "$TMP/verify.log" "${RANKS[0]}" verify --state "$state"
  # query answers from the live slots: run 0's keys are hits only where a
  # live slot holds them.
  run_ok "$TMP/query.log" "${RANKS[-1]}" query --state "$state" --input "$TMP/in/run-0" \
    --output "$TMP/q0" --emit hits
  "$PY" "$ORACLE" query-check --window $window --inputs "${inputs[@]}" --probe "$TMP/in/run-0" \
    --output "$TMP/q0" || fail "query hits are not the live slots' keys"
  # The sequence must tell the window apart from plain dedup and from a
  # window that forgets duplicates (no refresh).
  "$PY" - "$TMP/oracle-$((runs - 1)).json" <<'PYEOF' || fail "the corpus does not exercise expiry"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["new_again"] > 20 and o["no_refresh_wrong"] > 20, o
PYEOF
  # Expired slots' runs are deleted once no kept generation lists them: the
  # run files on disk are exactly those the kept generations list (h5dump).
  local g listed=() on_disk
  for g in "$state"/ckpt-*.h5; do
    h5dump -d /runs/id "$g" >"$TMP/runs.txt" || fail "h5dump $g"
    mapfile -t -O "${#listed[@]}" listed < <("$PY" - "$TMP/runs.txt" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
data = text[text.index("DATA {"):]
for v in re.findall(r"\b\d{6,}\b", data):
    i = int(v)
    print(f"run-{i >> 32}-{i & 0xffffffff:08x}.h5")
PYEOF
    )
  done
  on_disk=$(cd "$state" && ls run-*.h5 | sort)
  [[ $on_disk == "$(printf '%s\n' "${listed[@]}" | sort -u)" ]] ||
    fail "run files on disk are not those the kept generations list: $on_disk vs ${listed[*]}"
  log "state holds $(wc -w <<<"$on_disk") run files, all listed by the kept generations"
  # The window is part of the state.
  mkdir -p "$TMP/in/extra" && cp "$TMP/in/run-0/day-0-0.jsonl" "$TMP/in/extra/x.jsonl"
  run_refused "$TMP/ref1.log" "window" "${RANKS[0]}" dedup --input "$TMP/in/extra" \
    --output "$TMP/out-x1" --key-field id --state "$state" --window 4
  run_refused "$TMP/ref2.log" "--window 3" "${RANKS[0]}" dedup --input "$TMP/in/extra" \
    --output "$TMP/out-x2" --key-field id --state "$state"
  run_ok "$TMP/plain.log" "${RANKS[0]}" dedup --input "$TMP/in/run-0" --output "$TMP/out-p" \
    --key-field id --state "$TMP/plain"
  run_refused "$TMP/ref3.log" "has no window" "${RANKS[0]}" dedup --input "$TMP/in/extra" \
    --output "$TMP/out-x3" --key-field id --state "$TMP/plain" --window 3
  log "refusals name the window"
}

case_records() {
  mkdir -p "$TMP/in"
  "$PY" "$ORACLE" gen-records --out "$TMP/in/all.jsonl" --records 6000 --seed 7
  local len
  len=$(head -1 "$TMP/in/all.jsonl" | wc -c)
  # Rounds of exactly 250 records: a round reads until the bytes it holds
  # (each line, plus its key when the key is not a piece of the line, as a
  # JSON string value's 7 bytes are not) reach --batch-bytes; the metrics'
  # round count checks that assumption.
  run_ok "$TMP/run.log" 1 dedup --input "$TMP/in" --output "$TMP/out" --key-field id \
    --state "$TMP/state" --window 2 --slot-records 1000 --batch-bytes $((250 * (len + 7))) \
    --metrics "$TMP/metrics.json"
  "$PY" - "$TMP/metrics.json" <<'PYEOF' || fail "rounds were not of 250 records"
import json, sys
m = json.load(open(sys.argv[1]))
rounds = m.get("rounds", m.get("counters", {}).get("rounds"))
assert rounds in (24, 25), rounds
PYEOF
  "$PY" "$ORACLE" check-records --window 2 --slot-records 1000 --input "$TMP/in/all.jsonl" \
    --output "$TMP/out/all.jsonl" || fail "the output differs from the oracle"
  "$BIN" info --state "$TMP/state" --json >"$TMP/info.json"
  "$PY" - "$TMP/info.json" <<'PYEOF' || { cat "$TMP/info.json" >&2; fail "info slots"; }
import json, sys
info = json.load(open(sys.argv[1]))
assert info["window"] == "window/v1; slots=2; slot=records:1000", info["window"]
# Slot 5 filled at record 6000, so slot 6 opened (empty) before the end
# was known: slots 4..6 are live.
assert info["current_slot"] == 6, info["current_slot"]
assert [s["slot"] for s in info["slots"]] == [4, 5, 6], info["slots"]
assert [s["age"] for s in info["slots"]] == [2, 1, 0], info["slots"]
assert info["slots"][2]["keys"] == 0, info["slots"]
PYEOF
  log "slot-records run equals the oracle; slots 4..6 live"
  # Records slots go on across runs, and across rank counts: 3500 records on
  # 1 rank end half way through slot 3; an incremental run of the other 2500
  # on 3 ranks continues slot 3 from the stored progress (500 records).
  mkdir -p "$TMP/in-a" "$TMP/in-b"
  head -n 3500 "$TMP/in/all.jsonl" >"$TMP/in-a/a.jsonl"
  tail -n +3501 "$TMP/in/all.jsonl" >"$TMP/in-b/b.jsonl"
  local r=0 n
  for part in a b; do
    n=$((r == 0 ? 1 : 3))
    run_ok "$TMP/run-$part.log" $n dedup --input "$TMP/in-$part" --output "$TMP/out-$part" \
      --key-field id --state "$TMP/state2" --window 2 --slot-records 1000 \
      --batch-bytes $((250 * (len + 7)))
    r=$((r + 1))
  done
  "$BIN" info --state "$TMP/state2" --json >"$TMP/info2.json"
  "$PY" -c 'import json,sys; i=json.load(open(sys.argv[1])); assert i["current_slot"] == 6, i' \
    "$TMP/info2.json" || fail "the second run did not continue the slots"
  "$PY" "$ORACLE" check-records --window 2 --slot-records 1000 \
    --input "$TMP/in-a/a.jsonl" "$TMP/in-b/b.jsonl" \
    --output "$TMP/out-a/a.jsonl" "$TMP/out-b/b.jsonl" ||
    fail "two runs (1 then 3 ranks) differ from the oracle of one sequence"
  log "slot-records slots go on across runs (1 -> 3 ranks)"
}

case_resume() {
  # An unfinished windowed run resumed on another rank count keeps its slot
  # and the slot's progress: 3500 records, then a broken input ends the run
  # (--on-input-error fail: checkpointed, unfinished, half way through slot
  # 3); the input is replaced and the same command resumes on 3 ranks.
  mkdir -p "$TMP/in"
  "$PY" "$ORACLE" gen-records --out "$TMP/all.jsonl" --records 6000 --seed 7
  local len
  len=$(head -1 "$TMP/all.jsonl" | wc -c)
  head -n 3500 "$TMP/all.jsonl" >"$TMP/in/1-a.jsonl"
  printf 'this is not gzip data\n' >"$TMP/in/2-b.jsonl.gz"
  local args=(dedup --input "$TMP/in" --output "$TMP/out" --key-field id --state "$TMP/state"
    --window 2 --slot-records 1000 --batch-bytes $((250 * (len + 7))) --on-input-error fail)
  local rc=0
  "$MPIEXEC" "$NP_FLAG" 1 --oversubscribe "$BIN" "${args[@]}" >"$TMP/run-1.log" 2>&1 || rc=$?
  [[ $rc == 1 ]] || { cat "$TMP/run-1.log" >&2; fail "the broken input did not end the run (exit $rc)"; }
  "$BIN" info --state "$TMP/state" --json >"$TMP/info-1.json"
  "$PY" - "$TMP/info-1.json" <<'PYEOF' || { cat "$TMP/info-1.json" >&2; fail "state after the failure"; }
import json, sys
i = json.load(open(sys.argv[1]))
assert i["state"] == "unfinished", i["state"]
assert i["current_slot"] == 3 and i["current_slot_progress"] == 500, i
PYEOF
  tail -n +3501 "$TMP/all.jsonl" | gzip -c >"$TMP/in/2-b.jsonl.gz"
  run_ok "$TMP/run-2.log" 3 "${args[@]}"
  grep -q "resuming" "$TMP/run-2.log" || fail "the second run did not resume"
  gzip -dc "$TMP/out/2-b.jsonl.gz" >"$TMP/out-b.jsonl"
  "$PY" "$ORACLE" check-records --window 2 --slot-records 1000 --input "$TMP/all.jsonl" \
    --output "$TMP/out/1-a.jsonl" "$TMP/out-b.jsonl" ||
    fail "the resumed run (1 -> 3 ranks) differs from the oracle"
  log "an unfinished windowed run resumed on 3 ranks kept its slot and progress"
}

# stopped_at_round LOG RANKS ROUND args...: a dedup run held before the
# agreement of round ROUND (the fault pause), then SIGUSR1 to mpiexec (which
# forwards it to the ranks): the stop lands on that round's end; it must
# exit 75 with the stop checkpoint's message.
stopped_at_round() {
  local logf=$1 n=$2 round=$3
  shift 3
  [[ -n $MARK ]] || harness_marker
  ln -sf "$BIN" "$MARK/bs-stop"
  BLOOMSHARD_FAULT_PAUSE_IN_FINISH=before-round-agreement:$round \
    "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$MARK/bs-stop" "$@" >"$logf" 2>&1 &
  local job=$! i
  for ((i = 0; i < 3000; i++)); do
    grep -qs "fault pause at before-round-agreement:$round" "$logf" && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.02
  done
  grep -q "fault pause at before-round-agreement:$round" "$logf" ||
    { cat "$logf" >&2; fail "the run never reached round $round's agreement"; }
  kill -USR1 "$job"
  local rc=0
  wait "$job" || rc=$?
  [[ $rc == 75 ]] || { cat "$logf" >&2; fail "the stop at round $round exited $rc (want 75)"; }
  grep -q "stop signal received; checkpointed generation written" "$logf" ||
    { cat "$logf" >&2; fail "the stop at round $round wrote no stop checkpoint"; }
}

case_slot_stop() {
  # Rounds of exactly 250 records (one input file: one rank reads it, the
  # others have nothing, whatever the rank count): round 4's end fills slot
  # 0 with 1000 records, so there the stop and the slot's end coincide.
  mkdir -p "$TMP/in"
  "$PY" "$ORACLE" gen-records --out "$TMP/in/all.jsonl" --records 6000 --seed 7
  local len
  len=$(head -1 "$TMP/in/all.jsonl" | wc -c)
  local common=(--input "$TMP/in" --key-field id --window 2 --slot-records 1000
    --batch-bytes $((250 * (len + 7))))
  run_ok "$TMP/ref.log" "${RANKS[0]}" dedup "${common[@]}" --output "$TMP/ref" \
    --state "$TMP/ref-state"
  local args=(dedup "${common[@]}" --output "$TMP/out" --state "$TMP/state")
  stopped_at_round "$TMP/stop.log" "${RANKS[0]}" 4 "${args[@]}"
  if grep -q "arrived during checkpoint generation" "$TMP/stop.log"; then
    fail "the stop reached the job after round 4's agreement, not at it"
  fi
  # The stop's checkpoint is the segment's only generation: slot 0 full and
  # still current (the resume closes it), outputs cut at record 1000.
  local gens
  gens=$(find "$TMP/state" -maxdepth 1 -name 'ckpt-*.h5' | wc -l)
  [[ $gens == 1 ]] || fail "the stopped segment left $gens generations (want its stop's only)"
  "$BIN" info --state "$TMP/state" --json >"$TMP/info-stop.json"
  "$PY" - "$TMP/info-stop.json" <<'PYEOF' || { cat "$TMP/info-stop.json" >&2; fail "state at the stop"; }
import json, sys
i = json.load(open(sys.argv[1]))
assert i["state"] == "unfinished", i["state"]
assert i["current_slot"] == 0 and i["current_slot_progress"] == 1000, i
assert [s["slot"] for s in i["slots"]] == [0], i["slots"]
PYEOF
  head -n 1000 "$TMP/in/all.jsonl" >"$TMP/first-1000.jsonl"
  "$PY" "$ORACLE" check-records --window 2 --slot-records 1000 --input "$TMP/first-1000.jsonl" \
    --output "$TMP/out/all.jsonl" --no-expiry-check >/dev/null ||
    fail "the stopped run's committed output is not the oracle's first 1000 records"
  run_ok "$TMP/resume.log" "${RANKS[1]:-${RANKS[0]}}" "${args[@]}"
  grep -q "resuming" "$TMP/resume.log" || fail "the second run did not resume"
  cmp -s "$TMP/ref/all.jsonl" "$TMP/out/all.jsonl" ||
    fail "the stopped and resumed run's output differs from the unstopped run's"
  "$PY" "$ORACLE" check-records --window 2 --slot-records 1000 --input "$TMP/in/all.jsonl" \
    --output "$TMP/out/all.jsonl" || fail "the resumed run differs from the oracle"
  "$BIN" info --state "$TMP/ref-state" --json >"$TMP/info-ref.json"
  "$BIN" info --state "$TMP/state" --json >"$TMP/info-end.json"
  "$PY" - "$TMP/info-ref.json" "$TMP/info-end.json" <<'PYEOF' || fail "slots after the resume"
import json, sys
ref, got = (json.load(open(p)) for p in sys.argv[1:])
# Slot 0 closed once: the state ends in slot 6 as the unstopped run does
# (closed twice: slot 7; never: slot 5), with the same keys in each slot.
view = lambda i: (i["current_slot"], [(s["slot"], s["keys"]) for s in i["slots"]])
assert got["state"] == "finished", got["state"]
assert view(got) == view(ref), (view(got), view(ref))
assert view(ref)[0] == 6, view(ref)
PYEOF
  log "stopped at slot 0's end on ${RANKS[0]} rank(s), resumed on ${RANKS[1]:-${RANKS[0]}}: slot closed once, output = unstopped run = oracle"
}

case_annotate() {
  # Per-run slots (the default rule): run r is slot r. Every run is stopped
  # at its 2nd round end (a resumed run stays in its slot) on one rank
  # count and resumed on the next of the list.
  local runs=4 window=2
  "$PY" "$ORACLE" gen --out "$TMP/in" --runs $runs --records 1500 --seed 17 --bad-every 97
  local inputs=() outputs=() r n m all_one=1
  for ((r = 0; r < runs; r++)); do
    n=${RANKS[$((r % ${#RANKS[@]}))]}
    m=${RANKS[$(((r + 1) % ${#RANKS[@]}))]}
    ((n == 1 && m == 1)) || all_one=0
    inputs+=("$TMP/in/run-$r")
    outputs+=("$TMP/out-$r")
    local args=(dedup --input "$TMP/in/run-$r" --output "$TMP/out-$r" --key-field id
      --state "$TMP/state" --window "$window" --mode annotate --batch-bytes 4096
      --max-reject-fraction 1)
    stopped_at_round "$TMP/stop-$r.log" "$n" 2 "${args[@]}"
    "$BIN" info --state "$TMP/state" --json >"$TMP/info-$r.json"
    "$PY" - "$TMP/info-$r.json" $r <<'PYEOF' || { cat "$TMP/info-$r.json" >&2; fail "run $r's stop"; }
import json, sys
i, r = json.load(open(sys.argv[1])), int(sys.argv[2])
assert i["state"] == "unfinished" and i["current_slot"] == r, (i["state"], i["current_slot"])
PYEOF
    run_ok "$TMP/resume-$r.log" "$m" "${args[@]}"
    grep -q "resuming" "$TMP/resume-$r.log" || fail "run $r did not resume"
    local got flags=()
    ((all_one)) && flags+=(--first-in-run)
    ((r == runs - 1)) && flags+=(--require-expiry)
    got=$("$PY" "$ORACLE" check-annotate --window $window --inputs "${inputs[@]}" \
      --outputs "${outputs[@]}" "${flags[@]}" 2>"$TMP/check-$r.err") ||
      { cat "$TMP/check-$r.err" >&2; fail "run $r (stopped on $n, resumed on $m ranks) differs from the oracle"; }
    log "run $r stopped on $n, resumed on $m ranks: $got"
  done
  # The oracle can fail: a flipped duplicate flag, a lost attribute line.
  local last=$((runs - 1)) mutation
  for mutation in flip drop; do
    rm -rf "$TMP/bad" && cp -r "$TMP/out-$last" "$TMP/bad"
    "$PY" - "$TMP/bad/day-$last-1.jsonl" $mutation <<'PYEOF'
import sys
path, how = sys.argv[1:]
lines = open(path, "rb").read().splitlines(keepends=True)
i = next(i for i, l in enumerate(lines) if i > 3 and b"reject" not in l)
if how == "flip":
    l = lines[i]
    lines[i] = l.replace(b"false", b"true") if b"false" in l else l.replace(b"true", b"false")
else:
    del lines[i]
open(path, "wb").write(b"".join(lines))
PYEOF
    if "$PY" "$ORACLE" check-annotate --window $window --inputs "${inputs[@]}" \
      --outputs "${outputs[@]:0:last}" "$TMP/bad" >/dev/null 2>&1; then
      fail "the oracle accepted attribute files with a '$mutation' mutation"
    fi
  done
}

# killed_at_random LOG STATE args...: one run attacked until it finishes:
# each attempt on 1-4 ranks (RANDOM) is SIGKILLed 0-190 ms after it
# committed a generation (ranks and launcher), at most 3 times; then run to
# its end on 1-4 ranks. RANDOM_KILLS counts the kills, RANDOM_SEEN the
# rank counts.
killed_at_random() {
  local logf=$1 state=$2 kills=0 att=0 n job gen0 rc
  shift 2
  [[ -n $MARK ]] || harness_marker
  while ((kills < 3)); do
    att=$((att + 1))
    n=$((RANDOM % 4 + 1))
    RANDOM_SEEN+=" $n"
    KILLS=$((${KILLS:-0} + 1))
    local marker=$MARK/bs-rand-$KILLS
    ln -s "$BIN" "$marker"
    gen0=$(latest_generation "$state")
    "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$marker" "$@" >"$logf-$att" 2>&1 &
    job=$!
    after_a_commit "$state" "$gen0" "$job"
    if ! kill -0 "$job" 2>/dev/null; then
      rc=0
      wait "$job" || rc=$?
      ((rc == 0)) || { cat "$logf-$att" >&2; fail "attempt $att on $n ranks exited $rc"; }
      return 0
    fi
    kill_job "$marker" "$job"
    kills=$((kills + 1))
    RANDOM_KILLS=$((${RANDOM_KILLS:-0} + 1))
  done
  n=$((RANDOM % 4 + 1))
  RANDOM_SEEN+=" $n"
  run_ok "$logf-end" "$n" "$@"
}

# first_runs TAG STOPS [annotate]: the runs of $TMP/in with --kept-copy first
# and --window $FIRST_WINDOW on the fresh state $TMP/TAG-state, outputs
# $TMP/TAG-out-<r>; run r on the (r mod len)-th count of RANKS. STOPS=stop:
# run r is stopped first (SIGUSR1 at a round end, or SIGKILL after its first
# checkpoint or in the end pass, by r) and resumed on the next count. After
# each run the oracle checks every run so far; FIRST_RETRACTED counts the
# copies retracted (the metrics of each run's last segment).
first_runs() {
  local tag=$1 stops=$2 mode=${3:-filter} r n m
  FIRST_RETRACTED=0
  local inputs=() outputs=()
  for ((r = 0; r < FIRST_RUNS; r++)); do
    n=${RANKS[$((r % ${#RANKS[@]}))]}
    m=${RANKS[$(((r + 1) % ${#RANKS[@]}))]}
    [[ $tag == ref ]] && n=1 m=1
    inputs+=("$TMP/in/run-$r")
    outputs+=("$TMP/$tag-out-$r")
    local args=(dedup --input "$TMP/in/run-$r" --output "$TMP/$tag-out-$r" --key-field id
      --state "$TMP/$tag-state" --window "$FIRST_WINDOW" --kept-copy first --batch-bytes 4096
      --checkpoint-rounds "$FIRST_CKPT" --metrics "$TMP/$tag-metrics-$r.json" "${FIRST_EXTRA[@]}")
    [[ $mode == annotate ]] && args+=(--mode annotate --max-reject-fraction 1)
    local how=none
    if [[ $stops == stop ]]; then
      how=$(((r % 4 == 0)) && echo usr1 || echo kill)
      local pause=after-first-checkpoint
      # The end pass pauses only where there is something to cut: at > 1 rank.
      ((n > 1 && r % 4 == 2)) && pause=before-end-pass-checkpoint
      ((n > 1 && r % 4 == 3)) && pause=before-end-pass-renames
      if [[ $how == usr1 ]]; then
        stopped_at_round "$TMP/$tag-stop-$r.log" "$n" 2 "${args[@]}"
      else
        killed_at_fault_pause "$TMP/$tag-kill-$r.log" "$n" "$pause" "${args[@]}"
        how="SIGKILL at $pause"
      fi
      run_ok "$TMP/$tag-resume-$r.log" "$m" "${args[@]}"
      grep -q "resuming" "$TMP/$tag-resume-$r.log" || fail "run $r did not resume"
    elif [[ $stops == random ]]; then
      RANDOM_SEEN=""
      local before=${RANDOM_KILLS:-0}
      killed_at_random "$TMP/$tag-att-$r.log" "$TMP/$tag-state" "${args[@]}"
      how="$((${RANDOM_KILLS:-0} - before)) SIGKILLs, ranks:$RANDOM_SEEN"
      RANDOM_SEEN=${RANDOM_SEEN# }
      n=${RANDOM_SEEN%% *} m=${RANDOM_SEEN##* }
    else
      m=$n
      run_ok "$TMP/$tag-run-$r.log" "$n" "${args[@]}"
    fi
    local got
    if [[ $mode == annotate ]]; then
      got=$("$PY" "$ORACLE" check-annotate --window "$FIRST_WINDOW" --inputs "${inputs[@]}" \
        --outputs "${outputs[@]}" --first-in-run 2>"$TMP/$tag-check-$r.err")
    else
      got=$("$PY" "$ORACLE" check --window "$FIRST_WINDOW" --inputs "${inputs[@]}" \
        --outputs "${outputs[@]}" --first-in-run 2>"$TMP/$tag-check-$r.err")
    fi || { cat "$TMP/$tag-check-$r.err" >&2; fail "$tag run $r (on $n, then $m ranks; stop: $how) differs from the oracle"; }
    local this
    this=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["retracted"])' \
      "$TMP/$tag-metrics-$r.json")
    FIRST_RETRACTED=$((FIRST_RETRACTED + this))
    echo "$got" >"$TMP/$tag-oracle-$r.json"
    log "$tag run $r on $n then $m ranks (stop: $how): $this retracted; $got"
  done
}

# --kept-copy first with --window (one slot a run): every run keeps the
# first copy in the run of each key new to the window (oracle check
# --first-in-run), plain, .gz and .zst inputs; the outputs are those of a
# 1-rank run. With STOPS=stop every run is stopped or killed and resumed on
# another rank count.
first_case() {
  local stops=$1 mode=${2:-filter}
  FIRST_RUNS=5 FIRST_WINDOW=2
  local gen=(--runs $FIRST_RUNS --records 1500 --seed 23 --files 3)
  FIRST_EXTRA=() FIRST_CKPT=2
  [[ $stops == random ]] && FIRST_CKPT=1 # more commits to land after
  if [[ $mode == split ]]; then
    # Two ~150 KB plain inputs a run, each split into ranges off 1 rank:
    # a later range's copy retracted by an earlier one leaves at the join.
    mode=filter FIRST_RUNS=3
    gen=(--runs $FIRST_RUNS --records 6000 --seed 29 --files 2)
    FIRST_EXTRA=(--split-min-bytes 65536)
  elif [[ $mode == annotate ]]; then
    gen+=(--bad-every 97) # plain inputs, rejects among them
  else
    gen+=(--mixed)
  fi
  "$PY" "$ORACLE" gen --out "$TMP/in" "${gen[@]}"
  local retracted r
  first_runs got "$stops" "$mode"
  retracted=$FIRST_RETRACTED
  if [[ $stops != none || ${RANKS[0]} != 1 || ${#RANKS[@]} -gt 1 ]]; then
    first_runs ref none "$mode"
    for ((r = 0; r < FIRST_RUNS; r++)); do
      same_output_bytes "$TMP/ref-out-$r" "$TMP/got-out-$r" "run $r"
    done
    ((retracted > 0)) || fail "no copy was retracted on ${RANK_LIST} ranks: the case tests nothing"
  fi
  # A slot holds the keys that occurred in its run, whichever copy was kept.
  "$BIN" info --state "$TMP/got-state" --json >"$TMP/info.json"
  "$PY" - "$TMP/info.json" $FIRST_RUNS $FIRST_WINDOW "$TMP/got-oracle-$((FIRST_RUNS - 1)).json" \
    "$mode" <<'PYEOF' || { cat "$TMP/info.json" >&2; fail "info does not list the oracle's slots"; }
import json, sys
info, runs, window = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
assert info["state"] == "finished" and info["current_slot"] == runs - 1, info
assert [s["slot"] for s in info["slots"]] == list(range(runs - 1 - window, runs)), info["slots"]
if sys.argv[5] == "filter":  # check-annotate counts no keys per slot
    oracle = json.load(open(sys.argv[4]))
    for s in info["slots"]:
        assert s["keys"] == oracle["slot_keys"][str(s["slot"])], (s, oracle["slot_keys"])
PYEOF
  log "kept copies first in each run at ranks ${RANK_LIST} (stops: $stops): $retracted retracted, outputs = the 1-rank run's"
}

# --kept-copy first with --slot-records or --slot-every: refused before any
# work (exit 2, naming the slot option), in both modes, nothing written;
# --window alone is taken.
case_first_refusals() {
  "$PY" "$ORACLE" gen --out "$TMP/in" --runs 1 --records 200 --seed 5
  local slot mode
  for slot in "--slot-records 100" "--slot-every 1h"; do
    for mode in filter annotate; do
      # shellcheck disable=SC2086
      run_refused "$TMP/ref.log" "--kept-copy first cannot apply with ${slot%% *}" "${RANKS[0]}" \
        dedup --input "$TMP/in/run-0" --output "$TMP/out" --key-field id --state "$TMP/st" \
        --window 2 --kept-copy first --mode $mode $slot
      grep -q "round ends" "$TMP/ref.log" || fail "the refusal does not say why: $(cat "$TMP/ref.log")"
      [[ ! -e $TMP/out && ! -e $TMP/st ]] || fail "'$slot' ($mode): the refused run wrote an output or state"
    done
  done
  run_ok "$TMP/ok.log" "${RANKS[0]}" dedup --input "$TMP/in/run-0" --output "$TMP/out" \
    --key-field id --state "$TMP/st" --window 2 --kept-copy first
  log "--kept-copy first with a slot rule refused by name; with --window alone taken"
}

# The rule switched between the runs of one windowed state (docs/inputs.md
# "In a window"): the default, --kept-copy arrival, the default again.
case_first_switch() {
  "$PY" "$ORACLE" gen --out "$TMP/in" --runs 3 --records 1500 --seed 31 --files 3 --mixed
  local tag r n rule norm
  local rules=("" "--kept-copy arrival" "")
  for tag in ref got; do
    n=$([[ $tag == ref ]] && echo 1 || echo "${RANKS[0]}")
    for r in 0 1 2; do
      # shellcheck disable=SC2086
      run_ok "$TMP/$tag-run-$r.log" "$n" dedup --input "$TMP/in/run-$r" \
        --output "$TMP/$tag-out-$r" --key-field id --state "$TMP/$tag-state" --window 2 \
        --batch-bytes 4096 --metrics "$TMP/$tag-metrics-$r.json" ${rules[$r]}
      norm=$(attr "$(ls "$TMP/$tag-state"/ckpt-*.h5 | sort -V | tail -1)" normalization)
      if [[ -n ${rules[$r]} ]]; then
        [[ $norm != *input-order* ]] || fail "$tag run $r in arrival order saved the input-order mark: $norm"
      else
        [[ $norm == *input-order* ]] || fail "$tag run $r (the default) saved no input-order mark: $norm"
      fi
    done
  done
  "$PY" "$ORACLE" check --window 2 --inputs "$TMP"/in/run-{0,1,2} --outputs "$TMP"/got-out-{0,1,2} \
    >/dev/null || fail "the windowed key sets differ from the oracle's"
  same_output_bytes "$TMP/ref-out-0" "$TMP/got-out-0" "run 0 (the default)"
  same_output_bytes "$TMP/ref-out-2" "$TMP/got-out-2" "run 2 (the default after an arrival run)"
  local retracted
  retracted=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["retracted"])' \
    "$TMP/got-metrics-1.json")
  ((retracted == 0)) || fail "the arrival run retracted $retracted copies"
  retracted=$("$PY" -c 'import json,sys; print(sum(json.load(open(a))["retracted"] for a in sys.argv[1:]))' \
    "$TMP/got-metrics-0.json" "$TMP/got-metrics-2.json")
  ((${RANKS[0]} == 1 || retracted > 0)) || fail "no copy was retracted in the first-copy runs: the case tests nothing"
  log "rule switched between runs on ${RANKS[0]} ranks: each run took its own, first-copy runs = the 1-rank runs'"
}

case_first() { first_case none; }
case_first_stop() { first_case stop; }
case_first_annotate() { first_case stop annotate; }
case_first_kill() {
  RANDOM=$((${RANKS[0]} * 17 + 3))
  first_case random
  ((RANDOM_KILLS >= 4)) || fail "only ${RANDOM_KILLS:-0} kills landed before the runs finished"
}
case_first_split() {
  first_case none split
  ((${RANKS[0]} == 1)) || grep -q "split 2 input(s) into" "$TMP/got-run-0.log" ||
    fail "the inputs were not split: $(cat "$TMP/got-run-0.log")"
}

attr() { # FILE NAME: a root attribute's value as h5dump prints it
  h5dump -a "/$2" "$1" | sed -n 's/^ *(0): //p'
}

case_seconds() {
  "$BIN" synth --out "$TMP/in" --records 80000 --dup-rate 0.3 --files 2 --seed 5 >/dev/null
  local args=(--input "$TMP/in" --key-field id --batch-bytes 65536)
  run_ok "$TMP/plain.log" 1 dedup "${args[@]}" --output "$TMP/out-plain"
  # A checkpoint after every round makes the run last a few seconds.
  local t0=$SECONDS
  run_ok "$TMP/run.log" 1 dedup "${args[@]}" --output "$TMP/out" --state "$TMP/state" \
    --window 32 --slot-every 1s --checkpoint-rounds 1
  local took=$((SECONDS - t0))
  "$BIN" info --state "$TMP/state" --json >"$TMP/info.json"
  "$PY" - "$TMP/info.json" >"$TMP/slot.txt" <<'PYEOF' || { cat "$TMP/info.json" >&2; fail "info slots"; }
import json, sys
info = json.load(open(sys.argv[1]))
assert info["window"] == "window/v1; slots=32; slot=seconds:1", info["window"]
slots = info["slots"]
# The last slot may have opened empty at the final round; every earlier one
# got keys from the rounds of its second.
assert all(s["keys"] > 0 for s in slots[:-1]), slots
assert sum(s["keys"] for s in slots) == info["exact_keys"], (slots, info["exact_keys"])
print(info["current_slot"])
PYEOF
  local slot
  slot=$(cat "$TMP/slot.txt")
  ((slot >= 2)) || fail "a ${took} s run with --slot-every 1s ended in slot $slot (want >= 2)"
  if ((slot < 32)); then
    diff -r -x _bloomshard.lock "$TMP/out-plain" "$TMP/out" >/dev/null ||
      fail "with no slot expired the output differs from plain dedup's"
    log "slot-every 1s: $slot slots opened by wall time in a ${took} s run; output = plain dedup"
  else
    log "slot-every 1s: $slot slots in a ${took} s run (slots expired: output not compared)"
  fi
}

case_format() {
  [[ -x $PATCH ]] || fail "need --ckpt-patch"
  "$PY" "$ORACLE" gen --out "$TMP/in" --runs 1 --records 300 --seed 5
  run_ok "$TMP/run.log" "${RANKS[0]}" dedup --input "$TMP/in/run-0" --output "$TMP/out" \
    --key-field id --state "$TMP/state" --window 2
  local g norm window
  g=$(ls "$TMP"/state/ckpt-*.h5 | head -1)
  norm=$(attr "$g" normalization)
  window=$(attr "$g" window)
  [[ $norm == '"none/v1 unicode '*' window/v1"' ]] || fail "normalization lacks the mark: $norm"
  [[ $window == '"window/v1; slots=2; slot=run"' ]] || fail "window attribute: $window"
  [[ $(attr "$g" window_slot) == 0 ]] || fail "window_slot is not 0"
  cp -r "$TMP/state" "$TMP/nomark"
  cp -r "$TMP/state" "$TMP/v2"
  local bare=${norm#\"}
  bare=${bare% window/v1\"}
  "$PATCH" "$TMP/nomark/${g##*/}" normalization "$bare" || fail "ckpt_patch normalization"
  "$PATCH" "$TMP/v2/${g##*/}" window "window/v2; slots=2; slot=run" || fail "ckpt_patch window"
  local rc text
  for bad in nomark v2; do
    rc=0
    "$BIN" info --state "$TMP/$bad" >"$TMP/info-$bad.log" 2>&1 || rc=$?
    text=$(cat "$TMP/info-$bad.log")
    [[ $rc != 0 ]] || fail "info read the $bad state"
    case $bad in
      nomark) [[ $text == *"without the window mark"* ]] || fail "$bad: $text" ;;
      v2) [[ $text == *"does not start with 'window/v1; '"* ]] || fail "$bad: $text" ;;
    esac
  done
  log "the window mark and attribute are stored; a state missing either is refused"
}

"case_$CASE"
echo "PASS [window $CASE, ranks ${RANK_LIST}]"
