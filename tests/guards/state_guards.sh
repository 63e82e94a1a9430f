#!/usr/bin/env bash
# shellcheck disable=SC2034 # WATCH and the case variables are read by guard_expect.sh
# Every field a saved state fixes, checked on every path that opens the
# state through the real binary under mpiexec (docs/guards.md): a state is
# made with value A, the path is run with value B, and the run must end with
# the documented exit code and a message naming the field and both values,
# leaving the state, the outputs and the paths it would create untouched.
# One control per path runs the same command with A and must pass, so no
# refusal here comes from something else.
#
# usage: state_guards.sh BIN --path PATH [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
# paths: resume       an unfinished run (ended by a broken input) run again
#        incremental  a finished state and new inputs into a new --output (and
#                     into the used one, also as a fresh run: exit 4 twice)
#        query        query on a finished state (and on a paragraph state)
#        merge        merge's preconditions: sources that exist and hold a
#                     state, finished, not windowed, same scheme and slice
#                     count, a new --into
#        windows      a windowed state continued with another window or rule;
#                     the window options' own preconditions
# KEEP_TMP=1 keeps the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/guard_expect.sh"
harness_parse state_guards.sh "BIN --path=GPATH* --ranks=RANKS:2" "$@"
harness_tmp "guards-$GPATH" 'guards $GPATH, $RANKS ranks'
cd "$TMP" || exit 1

# The corpus: records with an id, a url and a text (paragraphs, some
# repeated, some differing only in case and spaces, so that every scheme
# field changes which records are duplicates).
"$PY" - <<'EOF'
import gzip, json, os
def rec(i):
    n = i % 700
    return {"id": f"doc-{i % 900:05d}", "url": f"https://e.example/{n % 500}",
            "text": f"Para {n} of the  Corpus.\n\nShared tail {n % 60}."}
def lines(a, b):
    return "".join(json.dumps(rec(i)) + "\n" for i in range(a, b))
for d in ("in", "new", "in-u"):
    os.makedirs(d, exist_ok=True)
open("in/1-a.jsonl", "w").write(lines(0, 1200))
open("in/2-b.jsonl", "w").write(lines(1200, 2000))
open("new/1-n.jsonl", "w").write(lines(1800, 2600))
open("in-u/1-a.jsonl", "w").write(lines(0, 1200))
# A gzip stream cut short: its first records read, then the damage that
# ends a --on-input-error fail run unfinished.
z = gzip.compress(lines(1200, 2400).encode())
open("in-u/2-b.jsonl.gz", "wb").write(z[: len(z) * 3 // 5])
EOF

SCHEME_A=(--key-field text --key-digest xxh3-128 --normalize nfc-casefold --text-normalize ws
  --hash-seed 5)
SIZES_A=(--fpr 0.001 --capacity 5000 --slices 16)
# The scheme fields, each changed alone: name, option words, patterns.
FIELD_CASES=(
  "seed|--hash-seed 7|hash seed differs: checkpoint '5', this job '7'"
  "key_field|--key-field id|key field differs: the state has 'text', this job asks for 'id'"
  "missing_field|--missing-field empty|--missing-field differs: the state has reject, this job asks for empty"
  "normalize|--normalize nfc|normalization differs: the state has nfc-casefold/v2, this job asks for nfc/v1"
  "normalize_version|--normalize nfc-casefold/v1|saved with nfc-casefold/v2 rules and this job asks for nfc-casefold/v1"
  "text_normalize|--text-normalize ws-lower|text normalization \\(--text-normalize\\) differs: the state has ws/v1, this job asks for ws-lower/v1"
  "key_digest|--key-digest sha256|key digest \\(--key-digest\\) differs: the state has xxh3-128/v1, this job asks for sha256/v1"
  "unit|--unit paragraph|key unit \\(--unit\\) differs: the state has record/v1, this job asks for paragraph/v1"
  "window|--window 3|the state has no window \\(its keys carry no slot\\), this job asks for --window 3"
)

run_mpi() { "$MPIEXEC" "$NP_FLAG" "$1" --oversubscribe "$BIN" "${@:2}"; }

# make_state DIR OUT INPUT options...: a finished state from INPUT, exit 0.
make_state() {
  local st=$1 out=$2 input=$3
  shift 3
  run_case "make-$(basename "$st")" run_mpi "$RANKS" dedup --input "$input" --output "$out" \
    --state "$st" "$@"
  [[ $RC == 0 ]] || { cat "$TMP/make-$(basename "$st").log" >&2; fail "making $st: exit $RC"; }
}

# field_case LINE: sets NAME, B (the option words) and PATTERN.
field_case() {
  IFS='|' read -r NAME B PATTERN <<<"$1"
}

# B_ARGS: BASE (default SCHEME_A) with one option replaced (or added) by
# the case's B.
with_b() {
  local b args i
  read -ra b <<<"$B"
  if [[ -v BASE ]]; then args=("${BASE[@]}"); else args=("${SCHEME_A[@]}"); fi
  for ((i = 0; i < ${#args[@]}; i += 2)); do
    [[ ${args[i]} != "${b[0]}" ]] || args[i + 1]=${b[1]}
  done
  [[ " ${args[*]} " == *" ${b[0]} "* ]] || args+=("${b[@]}")
  B_ARGS=("${args[@]}")
}

path_incremental() {
  make_state F out in "${SCHEME_A[@]}" "${SIZES_A[@]}"
  WATCH=(F out out-new)
  local line
  for line in "${FIELD_CASES[@]}"; do
    field_case "$line"
    with_b
    expect_refused "incremental.$NAME" 2 "cannot use the checkpoint in 'F'" "$PATTERN" -- \
      run_mpi "$RANKS" dedup --input new --output out-new --state F "${B_ARGS[@]}"
  done
  # Another run's outputs: refused by the output guard (exit 4) before the
  # state records the run (RUN.json), so the same command stays refused.
  mkdir N
  WATCH=(F out N)
  local again
  for again in incremental.into_used_output incremental.into_used_output_again; do
    expect_refused "$again" 4 "output dir 'out' holds the outputs of an earlier run" -- \
      run_mpi "$RANKS" dedup --input new --output out --state F "${SCHEME_A[@]}"
  done
  for again in fresh.into_used_output fresh.into_used_output_again; do
    expect_refused "$again" 4 "output dir 'out' holds the outputs of an earlier run" -- \
      run_mpi "$RANKS" dedup --input new --output out --state N "${SCHEME_A[@]}"
  done
  # Control: the same incremental run with A is accepted, and the filter
  # sizes (--fpr, --capacity, --slices) are the state's, said once each.
  cp -a F F-control
  expect_note incremental.control_and_sizes \
    "the state's --fpr 0.001 is used; this job asked for 0.01" \
    "the state's --capacity 5000 is used; this job asked for 9000" \
    "the state's --slices 16 is used; this job asked for 32" -- \
    run_mpi "$RANKS" dedup --input new --output out-control --state F-control "${SCHEME_A[@]}" \
    --fpr 0.01 --capacity 9000 --slices 32
}

path_resume() {
  local base=(dedup --input in-u --output out-u --state U --on-input-error fail)
  run_case make-U run_mpi 1 "${base[@]}" "${SCHEME_A[@]}" "${SIZES_A[@]}"
  [[ $RC == 1 ]] || { cat "$TMP/make-U.log" >&2; fail "the broken input did not end the run (exit $RC)"; }
  "$BIN" info --state U --json | "$PY" -c '
import json, sys
i = json.load(sys.stdin)
assert i["state"] == "unfinished", i["state"]
b = [p for p in i["inputs"] if p["path"] == "2-b.jsonl.gz"][0]
assert not b["done"] and b["records_done"] > 0, b' || fail "U is not an unfinished run inside b"
  WATCH=(U out-u)
  local line
  for line in "${FIELD_CASES[@]}"; do
    field_case "$line"
    with_b
    expect_refused "resume.$NAME" 2 "cannot use the checkpoint in 'U'" "$PATTERN" -- \
      run_mpi "$RANKS" "${base[@]}" "${B_ARGS[@]}"
  done
  expect_refused resume.mode 2 "the unfinished run in 'U' was started with (--mode filter|no --mode)?.*this job asks for --mode annotate" -- \
    run_mpi "$RANKS" "${base[@]}" "${SCHEME_A[@]}" --mode annotate
  WATCH=(U out-u out-elsewhere)
  expect_refused resume.output_dir 2 "the unfinished run in 'U' writes to '$TMP/out-u', not '$TMP/out-elsewhere'" -- \
    run_mpi "$RANKS" dedup --input in-u --output out-elsewhere --state U --on-input-error fail \
    "${SCHEME_A[@]}"
  # Control: with A (and the broken input skipped) the run resumes and
  # finishes, with the state's sizes.
  expect_note resume.control_and_sizes "resuming" \
    "the state's --fpr 0.001 is used; this job asked for 0.01" -- \
    run_mpi "$RANKS" dedup --input in-u --output out-u --state U --on-input-error skip \
    "${SCHEME_A[@]}" --fpr 0.01
}

path_query() {
  make_state F out in "${SCHEME_A[@]}"
  make_state P out-p in --key-field text --key-digest xxh3-128 --unit paragraph
  WATCH=(F P q)
  local cases=(
    "seed|--hash-seed 7|--hash-seed 7 conflicts with the state's hash seed 5"
    "key_field|--key-field id|--key-field 'id' conflicts with the state's key field 'text'"
    "normalize|--normalize nfc|--normalize 'nfc' conflicts with the state's normalization 'nfc-casefold/v2 unicode"
    "normalize_version|--normalize nfc-casefold/v1|--normalize 'nfc-casefold/v1' conflicts with the state's normalization 'nfc-casefold/v2 unicode"
  )
  local line
  for line in "${cases[@]}"; do
    field_case "$line"
    expect_refused "query.$NAME" 2 "$PATTERN" "a query uses the state's key scheme" -- \
      run_mpi "$RANKS" query --state F --input new --output q $B
  done
  expect_refused query.paragraph_unit 2 "the state holds paragraph keys \\(--unit paragraph\\)" -- \
    run_mpi "$RANKS" query --state P --input new --output q
  expect_note query.control "hits" -- \
    run_mpi "$RANKS" query --state F --input new --output q --key-field text --normalize nfc-casefold \
    --hash-seed 5
}

path_merge() {
  make_state F out in "${SCHEME_A[@]}" --slices 16
  make_state G out-g new "${SCHEME_A[@]}" --slices 16
  local cases=(
    "seed|--hash-seed 7|hash seed differs: '5' vs '7'"
    "key_field|--key-field id|key field differs: the state has 'text', this job asks for 'id'"
    "missing_field|--missing-field empty|--missing-field differs: the state has reject, this job asks for empty"
    "normalize|--normalize nfc|normalization differs: the state has nfc-casefold/v2, this job asks for nfc/v1"
    "normalize_version|--normalize nfc-casefold/v1|normalization differs: the state has nfc-casefold/v2, this job asks for nfc-casefold/v1"
    "text_normalize|--text-normalize ws-lower|text normalization \\(--text-normalize\\) differs: the state has ws/v1, this job asks for ws-lower/v1"
    "key_digest|--key-digest sha256|key digest \\(--key-digest\\) differs: the state has xxh3-128/v1, this job asks for sha256/v1"
    "unit|--unit paragraph|key unit \\(--unit\\) differs: the state has record/v1, this job asks for paragraph/v1"
    "slices|--slices 32|slice count differs: 32 vs 16"
  )
  local line BASE=("${SCHEME_A[@]}" --slices 16)
  for line in "${cases[@]}"; do
    field_case "$line"
    with_b
    make_state "X-$NAME" "out-x-$NAME" new "${B_ARGS[@]}"
    WATCH=(F "X-$NAME" C .C.merge-tmp)
    expect_refused "merge.$NAME" 2 "cannot merge 'X-$NAME' with 'F': $PATTERN" -- \
      run_mpi "$RANKS" merge --from F --from "X-$NAME" --into C
  done
  make_state W out-w new "${SCHEME_A[@]}" --window 2
  WATCH=(F W C .C.merge-tmp)
  expect_refused merge.windowed 2 "'W' is a windowed state \\(window/v1.*\\); merge reads only states without --window" -- \
    run_mpi "$RANKS" merge --from F --from W --into C
  run_case make-U run_mpi 1 dedup --input in-u --output out-u --state U --on-input-error fail \
    "${SCHEME_A[@]}" "${SIZES_A[@]}"
  [[ $RC == 1 ]] || { cat "$TMP/make-U.log" >&2; fail "the broken input did not end the run (exit $RC)"; }
  WATCH=(F U C .C.merge-tmp)
  expect_refused merge.unfinished 2 "'U' holds an unfinished run; finish it \\(run dedup again with its inputs\\) before merging" -- \
    run_mpi "$RANKS" merge --from F --from U --into C
  expect_refused merge.unfinished_first 2 "'U' holds an unfinished run" -- \
    run_mpi "$RANKS" merge --from U --from F --into C
  mkdir E
  WATCH=(F G E .E.merge-tmp)
  expect_refused merge.into_exists 2 "--into 'E' exists; merge writes a new state" -- \
    run_mpi "$RANKS" merge --from F --from G --into E
  touch a-file
  mkdir empty-dir
  WATCH=(F C .C.merge-tmp)
  expect_refused merge.from_missing 2 "--from 'no-such-dir' does not exist" -- \
    run_mpi "$RANKS" merge --from F --from no-such-dir --into C
  expect_refused merge.from_file 2 "--from 'a-file' is not a directory \\(a dedup --state dir\\)" -- \
    run_mpi "$RANKS" merge --from F --from a-file --into C
  expect_refused merge.from_no_checkpoint 2 "--from 'empty-dir' holds no checkpoint" -- \
    run_mpi "$RANKS" merge --from F --from empty-dir --into C
  WATCH=(F G)
  expect_note merge.control "" -- run_mpi "$RANKS" merge --from F --from G --into C
  "$BIN" info --state C --json | "$PY" -c '
import json, sys
assert json.load(sys.stdin)["state"] == "finished"' || fail "merge.control: C is not a finished state"
}

path_windows() {
  make_state W out in "${SCHEME_A[@]}" --window 2
  WATCH=(W out out-new)
  local cases=(
    "window_size|--window 3|the state's window is --window 2, this job has --window 3"
    "no_window|--window 0|the state's window is --window 2, this job has no --window"
    "slot_records|--window 2 --slot-records 100|the state's window is --window 2, this job has --window 2 --slot-records 100"
    "slot_every|--window 2 --slot-every 1h|the state's window is --window 2, this job has --window 2 --slot-every 3600s"
  )
  local line
  for line in "${cases[@]}"; do
    field_case "$line"
    expect_refused "windows.$NAME" 2 "cannot use the checkpoint in 'W'" "$PATTERN" \
      "a state keeps its window and slot rule" -- \
      run_mpi "$RANKS" dedup --input new --output out-new --state W "${SCHEME_A[@]}" $B
  done
  # The window options' own preconditions, before any state is opened.
  WATCH=(W out-new S2)
  expect_refused windows.needs_state 2 "--window needs --state" -- \
    run_mpi "$RANKS" dedup --input new --output out-new "${SCHEME_A[@]}" --window 2
  expect_refused windows.size_range 2 "--window 33 outside \\[1, 32\\]" -- \
    run_mpi "$RANKS" dedup --input new --output out-new --state S2 "${SCHEME_A[@]}" --window 33
  expect_refused windows.slot_rule_needs_window 2 "--slot-records/--slot-every need --window" -- \
    run_mpi "$RANKS" dedup --input new --output out-new --state S2 "${SCHEME_A[@]}" \
    --slot-records 100
  expect_refused windows.slot_rules_exclusive 2 "--slot-records and --slot-every exclude each other" -- \
    run_mpi "$RANKS" dedup --input new --output out-new --state S2 "${SCHEME_A[@]}" --window 2 \
    --slot-records 100 --slot-every 1h
  cp -a W W-control
  expect_note windows.control "" -- \
    run_mpi "$RANKS" dedup --input new --output out-control --state W-control "${SCHEME_A[@]}" \
    --window 2
}

case $GPATH in
  resume | incremental | query | merge | windows) "path_$GPATH" ;;
  *) harness_usage "unknown --path '$GPATH'" ;;
esac
log "every guard of this path refused loudly and left the state and outputs untouched"
