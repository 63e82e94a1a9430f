#!/usr/bin/env bash
# End-to-end cases of `bloomshard dedup --unit minhash` (filter mode),
# checked by minhash_oracle.py (the documented sketch through
# tests/bench/minhash_reference.py, the streaming rule, the guarantees at
# any rank count) and against the metrics JSON.
#
# usage: minhash_case.sh --case NAME --ranks N --bin BLOOMSHARD --dir TESTS_E2E
#                        [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# cases: dedup  on N ranks: (1) one input file, one reader, so the job's order
#               is the input order: byte-exact against the streaming rule, with
#               rounds cut into sub-rounds (--max-exchange-bytes 4096);
#               (2) four files read in parallel, sub-rounds too: the documented
#               guarantees (exactly once; no two kept records share a band key;
#               every group linked by band keys keeps a record), exact at 1
#               rank; 4 rejects per corpus (no text, a number, invalid UTF-8 in
#               a JSONL string and in a plain line);
#               (3) the state keeps the scheme: another --bands, --rows or
#               --shingle is refused naming both values, the same continues
#               incrementally, info shows it; query --emit hits writes the
#               records with a band key the state holds (decontamination);
#               (4, 2 ranks: rank 0 checks options alike at any count)
#               refusals before any work: exit 2 naming the option, nothing
#               written; (5, 2 ranks) two merged minhash
#               states hold the band keys of one run over both inputs, and
#               states of other --bands are not merged
#        annotate  one input file, filter vs --mode annotate (both formats) on N
#               ranks: a record is flagged exactly when filter mode removes it
#        confirm  --confirm-jaccard on N ranks: (1) one input file, one reader:
#               at T = 0.8 byte-exact against the streaming rule with the 4-bit
#               estimate, and its candidates, confirmed and unconfirmed hits
#               exact (some hits unconfirmed, fewer removals than without
#               confirmation); at T = 0.001 the same bytes as a run without
#               confirmation (every band hit of 14 x 8 has an estimate of at
#               least 0.0095); (2) four files read in parallel: the documented
#               guarantees with confirmation (none removed below T), exact at
#               1 rank, also with --exchange node from 3 ranks; (3, 2 ranks)
#               refusals before any work: T outside (0, 1],
#               without --unit minhash, and query --confirm-jaccard
#        annotate_confirm  --mode annotate --confirm-jaccard 0.8 on N ranks:
#               (1) one input file, one reader: both formats' flags,
#               estimates and matched positions exactly the streaming rule's
#               (the oracle's first inserter), the flags exactly the records
#               filter mode removes, the plan line counts the positions;
#               (2) four files read in parallel: the guarantees (each match a
#               record sharing a band key, at the estimate written, >= T),
#               exact at 1 rank
#        confirm_state  --confirm-jaccard with --state on N ranks: a run over
#               the first half of one file, then an incremental run over the
#               second half on another rank count (the forms move to the new
#               owners): both outputs together are the bytes of one run over
#               the whole file (near copies of the first run's records removed
#               only when confirmed); another T or none refused naming both
#               values; a flipped byte of /tier2/forms refused by the next run
#               and by verify, naming the run file, slice and dataset
#        confirm_kill  as kill, with --confirm-jaccard 0.8 and one unsplit input
#               file (one reader): after the kills, the bytes of an
#               uninterrupted run at 1 rank, exact against the streaming rule
#        confirm_origins  --mode annotate --confirm-jaccard with --state on
#               N ranks: run A (filter, then annotate mode) into a state, run B
#               in annotate mode against it on another rank count: flags,
#               estimates and matches (run, input, offset) exactly the
#               streaming rule's over A then B (matches in both runs); verify
#               and info count the form origins; a flipped byte of
#               /tier2/form_origins refused by the next run and by verify
#        confirm_old_state  a confirming state written before form origins
#               (tests/data/confirm_state_without_origins): annotate mode
#               refused (exit 2, before any work); filter mode continues it as
#               one run, and it stays without origins
#        confirm_origins_kill  SIGKILLs of an annotate run B against a state
#               of run A, resumed on 1..3 ranks: the bytes of an uninterrupted
#               run B at 1 rank, exact against the streaming rule
#        kill   4 SIGKILLs of all ranks at random moments of a checkpointing run
#               (--checkpoint-rounds 1), resumed on 1..3 ranks each time, then run
#               to the end on N ranks: the guarantees, and the band key set of
#               an uninterrupted run
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse minhash_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --dir=DIR*" "$@"
ORACLE=$DIR/minhash_oracle.py
[[ -f $ORACLE ]] || harness_usage "no minhash_oracle.py in --dir $DIR"
"$PY" -c "import numpy, xxhash" 2>/dev/null || harness_usage "--python $PY lacks numpy or xxhash (use /usr/bin/python3)"
harness_tmp "minhash-$CASE-$RANKS" "minhash $CASE, $RANKS ranks"
harness_marker
start=$SECONDS

corpus() { "$PY" "$DIR/minhash_corpus.py" "$@"; }

# dedup IN OUT RANKS options...: runs the job; its exit code in JOB_RC.
dedup() {
  local in=$1 out=$2 ranks=$3
  shift 3
  set +e
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --input "$in" --output "$out" \
    --metrics "$out/metrics.json" --key-field text --unit minhash --max-reject-fraction 0.1 "$@" \
    >"$out.log" 2>&1
  JOB_RC=$?
  set -e
}
dedup_ok() {
  dedup "$@"
  [[ $JOB_RC == 0 ]] || { cat "$2.log" >&2; fail "dedup exited $JOB_RC (want 0)"; }
}
oracle() { "$PY" "$ORACLE" "$@" || fail "the minhash oracle rejected the outputs"; }
json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

# refused WHAT MESSAGE dedup-args...: exit 2 naming MESSAGE, no output dir.
refused() {
  local what=$1 want=$2
  shift 2
  rm -rf "$TMP/out-bad"
  dedup "$TMP/one" "$TMP/out-bad" "$RANKS" "$@"
  local said
  said=$(cat "$TMP/out-bad.log")
  [[ $JOB_RC == 2 && $said == *"$want"* ]] ||
    { echo "$said" >&2; fail "$what: exit $JOB_RC, want 2 naming '$want'"; }
  [[ ! -e $TMP/out-bad ]] || fail "$what: the refused run wrote $TMP/out-bad"
}

SMALL=(--batch-bytes 131072 --max-exchange-bytes 4096 --slices 64)

case_dedup() {
  corpus "$TMP/one" --files 1 --clusters 60 --seed 41
  corpus "$TMP/four" --files 4 --clusters 80 --seed 42 --plain
  # 1. One reader: the job's order is the input order, whatever the owners.
  dedup_ok "$TMP/one" "$TMP/out-one" "$RANKS" "${SMALL[@]}" --split-inputs off
  oracle --exact --input "$TMP/one" --output "$TMP/out-one" --metrics "$TMP/out-one/metrics.json"
  local subrounds rounds
  subrounds=$(json_field "$TMP/out-one/metrics.json" subrounds)
  rounds=$(json_field "$TMP/out-one/metrics.json" rounds)
  ((subrounds > rounds)) || fail "no round was cut into sub-rounds ($rounds rounds, $subrounds)"
  grep -q -- "--unit minhash word:5 14x8: tier-2 payload 224 B per new record (1008 B with" \
    "$TMP/out-one.log" || fail "the plan line does not give the tier-2 bytes per record"
  log "one file: byte-exact against the streaming rule ($rounds rounds, $subrounds sub-rounds)"
  # 2. Several readers: the guarantees; exact at one rank.
  dedup_ok "$TMP/four" "$TMP/out-four" "$RANKS" "${SMALL[@]}"
  local exact=()
  [[ $RANKS == 1 ]] && exact=(--exact)
  oracle "${exact[@]}" --input "$TMP/four" --output "$TMP/out-four" \
    --metrics "$TMP/out-four/metrics.json"
  local rejects
  rejects=$(cat "$TMP"/out-four/_rejects/*.jsonl | wc -l)
  [[ $rejects == 4 ]] ||
    fail "$rejects reject lines, want 4 (no text, 42, invalid UTF-8 in JSON and in a plain line)"
  grep -q '"minhash text is not UTF-8: invalid UTF-8 at byte 13: expected a continuation byte' "$TMP"/out-four/_rejects/*.jsonl ||
    fail "the plain line of invalid UTF-8 is not rejected naming its byte"
  grep -q '"minhash text field is not a string"' "$TMP"/out-four/_rejects/*.jsonl ||
    fail "the number reject does not say why"
  log "four files: the guarantees${exact:+ and the exact decisions}; 4 rejects with reasons"
  # 3. The state keeps the scheme.
  dedup_ok "$TMP/one" "$TMP/out-st" "$RANKS" --state "$TMP/state" --split-inputs off
  mkdir -p "$TMP/today"
  corpus "$TMP/today" --files 1 --clusters 10 --seed 43
  local opt said
  for opt in "--bands=20|--bands differs: the state has 14, this job asks for 20" \
    "--rows=7|--rows differs: the state has 8, this job asks for 7" \
    "--shingle=char:5|--shingle differs: the state has word:5, this job asks for char:5"; do
    rm -rf "$TMP/out-today"
    dedup "$TMP/today" "$TMP/out-today" "$RANKS" "${opt%%|*}" --state "$TMP/state"
    said=$(cat "$TMP/out-today.log")
    [[ $JOB_RC == 2 && $said == *"${opt#*|}"* && ! -e $TMP/out-today ]] ||
      { echo "$said" >&2; fail "${opt%%|*} on a minhash state: exit $JOB_RC, want 2"; }
  done
  rm -rf "$TMP/out-today"
  dedup_ok "$TMP/today" "$TMP/out-today" "$RANKS" --state "$TMP/state"
  said=$(cat "$TMP/out-today.log")
  [[ $said == *"incremental run"* ]] || fail "the minhash state was not continued"
  local info
  info=$("$BIN" info --state "$TMP/state" 2>&1)
  [[ $info == *"unit=minhash/v1; shingle=word:5; bands=14; rows=8"* ]] ||
    { echo "$info" >&2; fail "info does not show the minhash scheme"; }
  # query (decontamination): records of new texts and near copies of the
  # state's, hits are those with a band key the state holds.
  corpus "$TMP/qin" --files 2 --clusters 15 --seed 46
  head -n 30 "$TMP/one/part-000.jsonl" >>"$TMP/qin/part-001.jsonl"
  # Near copies: one word of the middle of each long text changed, so some
  # band keys differ and the record is a hit through the others.
  "$PY" -c '
import json, sys
for line in open(sys.argv[1], "rb").readlines()[30:60]:
    try:
        d = json.loads(line.decode("utf-8"))
    except ValueError:  # the invalid UTF-8 record
        continue
    w = d["text"].split(" ") if isinstance(d.get("text"), str) else []
    if len(w) > 100:
        w[len(w) // 2] = "zzzchanged"
        print(json.dumps({"id": "near-%s" % d["id"], "text": " ".join(w)}))
' "$TMP/one/part-000.jsonl" >>"$TMP/qin/part-000.jsonl"
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" query --state "$TMP/state" \
    --input "$TMP/qin" --output "$TMP/out-q" --max-reject-fraction 0.1 >"$TMP/query.log" 2>&1 ||
    { cat "$TMP/query.log" >&2; fail "query on a minhash state failed"; }
  oracle --query --input "$TMP/qin" --output "$TMP/out-q" --state-input "$TMP/one" \
    --state-input "$TMP/today"
  local rc
  log "the state refuses other --bands/--rows/--shingle, continues with its own; query answers"
  # The refusals and the merge run at 2 ranks only: rank 0 checks the
  # options before any work, the same at every rank count.
  [[ $RANKS == 2 ]] || return 0
  # 4. (2 ranks only) Refusals before any work.
  refused "a tuple key" "--unit minhash sketches one text field" --key-field id
  refused "a key digest" "--key-digest do not apply" --key-digest xxh3-128
  refused "a 0-word shingle" "--shingle" --shingle word:0
  refused "a line shingle" "--shingle" --shingle line:5
  refused "0 bands" "--bands must be at least 1" --bands 0
  refused "too many values" "--bands 64 x --rows 65" --bands 64 --rows 65
  set +e
  said=$("$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$TMP/one" \
    --output "$TMP/out-bad" --key-field text --unit minhsh 2>&1)
  rc=$?
  set -e
  [[ $rc == 2 && $said == *"--unit must be record, paragraph or minhash, not 'minhsh'"* &&
    ! -e $TMP/out-bad ]] || { echo "$said" >&2; fail "an unknown unit: exit $rc, want 2"; }
  log "refusals: exit 2 naming the option, nothing written"
  # 5. (2 ranks only) merge: two minhash states hold the band keys of one run
  #    over both inputs; a state of other --bands is refused naming both.
  mkdir -p "$TMP/both"
  cp "$TMP/one/part-000.jsonl" "$TMP/both/a.jsonl"
  cp "$TMP/today/part-000.jsonl" "$TMP/both/b.jsonl"
  dedup_ok "$TMP/both" "$TMP/out-both" "$RANKS"
  dedup_ok "$TMP/one" "$TMP/out-m1" "$RANKS" --state "$TMP/st-one"
  dedup_ok "$TMP/today" "$TMP/out-m2" "$RANKS" --state "$TMP/st-today"
  dedup_ok "$TMP/today" "$TMP/out-m3" "$RANKS" --state "$TMP/st-b20" --bands 20
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" merge --from "$TMP/st-one" \
    --from "$TMP/st-today" --into "$TMP/st-merged" >"$TMP/merge.log" 2>&1 ||
    { cat "$TMP/merge.log" >&2; fail "merging two minhash states failed"; }
  local merged want
  merged=$("$BIN" info --json --state "$TMP/st-merged" >"$TMP/merged.json" &&
    json_field "$TMP/merged.json" exact_keys)
  want=$(json_field "$TMP/out-both/metrics.json" tier2_keys)
  [[ $merged == "$want" ]] || fail "merged state holds $merged band keys, one run $want"
  set +e
  said=$("$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" merge --from "$TMP/st-one" \
    --from "$TMP/st-b20" --into "$TMP/st-bad" 2>&1)
  rc=$?
  set -e
  [[ $rc == 2 && $said == *"--bands differs"*"14"*"20"* && ! -e $TMP/st-bad ]] ||
    { echo "$said" >&2; fail "merging minhash states of 14 and 20 bands: exit $rc, want 2"; }
  log "merge: $merged band keys as one run over both inputs; other --bands refused"
}

case_confirm() {
  corpus "$TMP/one" --files 1 --clusters 60 --seed 47
  corpus "$TMP/four" --files 4 --clusters 80 --seed 48 --plain
  local one=("${SMALL[@]}" --split-inputs off) t
  # 1. One reader: exact, at a threshold and at a tiny one.
  dedup_ok "$TMP/one" "$TMP/out-plain" "$RANKS" "${one[@]}"
  dedup_ok "$TMP/one" "$TMP/out-t8" "$RANKS" "${one[@]}" --confirm-jaccard 0.8
  oracle --exact --confirm-jaccard 0.8 --input "$TMP/one" --output "$TMP/out-t8" \
    --metrics "$TMP/out-t8/metrics.json"
  grep -q -- "forms of --confirm-jaccard in memory ~" "$TMP/out-t8.log" ||
    fail "the plan line does not give the memory of the confirmation forms"
  local plain t8 unconfirmed
  plain=$(json_field "$TMP/out-plain/metrics.json" dropped)
  t8=$(json_field "$TMP/out-t8/metrics.json" dropped)
  unconfirmed=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["minhash_dedup"]["unconfirmed_hits"])' "$TMP/out-t8/metrics.json")
  ((unconfirmed > 0 && t8 < plain)) ||
    fail "T = 0.8: $unconfirmed unconfirmed hits, $t8 removed, $plain without confirmation"
  dedup_ok "$TMP/one" "$TMP/out-t0" "$RANKS" "${one[@]}" --confirm-jaccard 0.001
  oracle --exact --confirm-jaccard 0.001 --input "$TMP/one" --output "$TMP/out-t0" \
    --metrics "$TMP/out-t0/metrics.json"
  cmp -s "$TMP/out-plain/part-000.jsonl" "$TMP/out-t0/part-000.jsonl" ||
    fail "T = 0.001 kept other records than a run without confirmation"
  log "one file: exact with T = 0.8 ($t8 removed, $plain without, $unconfirmed hits" \
    "unconfirmed); T = 0.001 as without confirmation"
  # 2. Several readers: the guarantees with confirmation; exact at 1 rank.
  dedup_ok "$TMP/four" "$TMP/out-four" "$RANKS" "${SMALL[@]}" --confirm-jaccard 0.8
  local exact=()
  [[ $RANKS == 1 ]] && exact=(--exact)
  oracle "${exact[@]}" --confirm-jaccard 0.8 --input "$TMP/four" --output "$TMP/out-four" \
    --metrics "$TMP/out-four/metrics.json"
  log "four files: the guarantees with confirmation${exact:+, exact}"
  if ((RANKS >= 3)); then  # the two-step exchange moves the longer keys too
    dedup_ok "$TMP/four" "$TMP/out-node" "$RANKS" "${SMALL[@]}" --confirm-jaccard 0.8 \
      --exchange node
    oracle --confirm-jaccard 0.8 --input "$TMP/four" --output "$TMP/out-node" \
      --metrics "$TMP/out-node/metrics.json"
    log "four files, --exchange node: the guarantees with confirmation"
  fi
  [[ $RANKS == 2 ]] || return 0
  # 3. (2 ranks only) Refusals before any work.
  for t in 0 1.5 -0.2 nan 0.8x; do
    refused "T = $t" "--confirm-jaccard must be a number T with 0 < T <= 1, not '$t'" \
      --confirm-jaccard "$t"
  done
  local said rc
  set +e
  said=$("$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$TMP/one" \
    --output "$TMP/out-bad" --key-field text --confirm-jaccard 0.8 2>&1)
  rc=$?
  set -e
  [[ $rc == 2 && $said == *"--confirm-jaccard applies to --unit minhash only"* &&
    ! -e $TMP/out-bad ]] || { echo "$said" >&2; fail "--confirm-jaccard of records: exit $rc, want 2"; }
  dedup_ok "$TMP/one" "$TMP/out-st" "$RANKS" --state "$TMP/st-q"
  set +e
  said=$("$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" query --state "$TMP/st-q" \
    --input "$TMP/one" --output "$TMP/out-q" --confirm-jaccard 0.8 2>&1)
  rc=$?
  set -e
  [[ $rc == 2 && $said == *"confirm-jaccard"* && ! -e $TMP/out-q ]] ||
    { echo "$said" >&2; fail "query --confirm-jaccard: exit $rc, want 2"; }
  log "refusals: exit 2 naming --confirm-jaccard, nothing written"
}

# kill_loop ARGS...: 4 SIGKILLs of all ranks of `dedup ARGS` (a
# checkpointing run into $TMP/out and $TMP/state) at random moments after a
# generation of the attempt's own, resumed on 1..3 ranks each time (or
# fewer kills when the run finishes first), then the final resume on
# $RANKS ranks. Sets KILL_METRICS to the --metrics option of the outputs to
# check (empty when a killed attempt finished the run).
kill_loop() {
  local args=("$@")
  local att=0 kills=0 marker r
  RANDOM=9
  local gens=""
  while ((kills < 4)); do
    att=$((att + 1))
    marker=$MARK/bs-a$att
    local before
    before=$(cat "$TMP/state/LATEST" 2>/dev/null || echo none)
    ln -s "$BIN" "$marker"
    timeout -s KILL 60 "$MPIEXEC" "$NP_FLAG" $((RANDOM % 3 + 1)) --oversubscribe "$marker" dedup \
      "${args[@]}" --output "$TMP/out" --state "$TMP/state" --metrics "$TMP/out/metrics.json" \
      >"$TMP/att-$att.log" 2>&1 &
    local job=$!
    # Kill once this attempt committed a generation of its own, a random
    # 0-300 ms later.
    local waited=0
    while kill -0 $job 2>/dev/null && [[ $(cat "$TMP/state/LATEST" 2>/dev/null || echo none) == "$before" ]] &&
      ((waited < 5000)); do
      sleep 0.01
      waited=$((waited + 10))
    done
    r=$((RANDOM % 300))
    sleep "0.$(printf '%03d' $r)"
    if kill -0 $job 2>/dev/null; then
      kill_marker "$marker"
      kills=$((kills + 1))
      gens+=" $(cat "$TMP/state/LATEST" 2>/dev/null || echo -)"
    fi
    wait $job 2>/dev/null || true
    if grep -q "already finished" "$TMP/att-$att.log" || grep -q "records," "$TMP/att-$att.log"; then
      break  # finished before enough kills: the outputs are checked below
    fi
    ((att < 30)) || fail "no progress after $att attempts"
  done
  log "$kills kills in $att attempts (LATEST at each kill:$gens) after $((SECONDS - start)) s"
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup "${args[@]}" --output "$TMP/out" \
    --state "$TMP/state" --metrics "$TMP/out/metrics.json" >"$TMP/final.log" 2>&1 ||
    { cat "$TMP/final.log" >&2; fail "the final resume failed"; }
  KILL_METRICS=(--metrics "$TMP/out/metrics.json")
  # A kill after the finishing generation and before the metrics write
  # leaves a finished run without metrics (docs/reliability.md, "Not covered").
  if [[ ! -f $TMP/out/metrics.json ]] && grep -q "already finished" "$TMP/final.log"; then
    log "the run was finished by a killed attempt: no metrics to check"
    KILL_METRICS=()
  fi
}

case_kill() {
  corpus "$TMP/in" --files 3 --clusters 90 --seed 44 --plain
  kill_loop --input "$TMP/in" --key-field text --unit minhash --max-reject-fraction 0.1 \
    --batch-bytes 65536 --slices 32 --checkpoint-rounds 1
  oracle --input "$TMP/in" --output "$TMP/out" "${KILL_METRICS[@]}"
  dedup_ok "$TMP/in" "$TMP/ref" 1
  local a b
  a=$(json_field "$TMP/ref/metrics.json" tier2_keys)
  "$BIN" info --json --state "$TMP/state" >"$TMP/info.json"
  b=$(json_field "$TMP/info.json" exact_keys)
  [[ $a == "$b" ]] || fail "the killed run holds $b band keys, an uninterrupted one $a"
  log "after the kills: exactly once, the guarantees, $b band keys as uninterrupted"
}

case_confirm_kill() {
  corpus "$TMP/in" --files 1 --clusters 150 --seed 49
  local confirm=(--split-inputs off --confirm-jaccard 0.8)
  kill_loop --input "$TMP/in" --key-field text --unit minhash --max-reject-fraction 0.1 \
    --batch-bytes 32768 --slices 32 --checkpoint-rounds 1 "${confirm[@]}"
  oracle --exact --confirm-jaccard 0.8 --input "$TMP/in" --output "$TMP/out" "${KILL_METRICS[@]}"
  dedup_ok "$TMP/in" "$TMP/ref" 1 "${confirm[@]}"
  cmp -s "$TMP/ref/part-000.jsonl" "$TMP/out/part-000.jsonl" ||
    fail "after the kills the outputs differ from an uninterrupted run's at 1 rank"
  local a b
  a=$(json_field "$TMP/ref/metrics.json" tier2_keys)
  "$BIN" info --json --state "$TMP/state" >"$TMP/info.json"
  b=$(json_field "$TMP/info.json" exact_keys)
  [[ $a == "$b" ]] || fail "the killed run holds $b band keys, an uninterrupted one $a"
  "$BIN" verify --state "$TMP/state" >"$TMP/verify.log" 2>&1 ||
    { cat "$TMP/verify.log" >&2; fail "the killed run's state does not verify"; }
  log "after the kills with confirmation: the bytes of an uninterrupted run, $b band keys"
}

# flip_forms STATE: flips one byte in the middle of /tier2/forms of every
# run file of STATE (h5py finds the dataset's bytes).
flip_forms() {
  "$PY" - "$1" <<'PYEOF' || fail "cannot flip a byte of /tier2/forms in $1"
import glob, sys, h5py
for run in sorted(glob.glob(sys.argv[1] + "/run-*.h5")):
    with h5py.File(run, "r") as f:
        d = f["/tier2/forms"]
        at = d.id.get_offset() + d.shape[0] // 2
    with open(run, "r+b") as raw:
        raw.seek(at)
        b = raw.read(1)
        raw.seek(at)
        raw.write(bytes([b[0] ^ 0x5A]))
PYEOF
}

case_confirm_state() {
  corpus "$TMP/whole" --files 1 --clusters 80 --seed 50
  local lines half other=$((RANKS % 3 + 1))
  lines=$(wc -l <"$TMP/whole/part-000.jsonl")
  half=$((lines / 2))
  mkdir -p "$TMP/first" "$TMP/second" "$TMP/third"
  head -n "$half" "$TMP/whole/part-000.jsonl" >"$TMP/first/part-000.jsonl"
  tail -n +$((half + 1)) "$TMP/whole/part-000.jsonl" >"$TMP/second/part-000.jsonl"
  local t8=(--split-inputs off --confirm-jaccard 0.8 "${SMALL[@]}")
  # 1. Two runs of one state, on two rank counts, against one run.
  dedup_ok "$TMP/whole" "$TMP/out-whole" 1 "${t8[@]}"
  oracle --exact --confirm-jaccard 0.8 --input "$TMP/whole" --output "$TMP/out-whole"
  dedup_ok "$TMP/first" "$TMP/out-1" "$RANKS" "${t8[@]}" --state "$TMP/st"
  dedup_ok "$TMP/second" "$TMP/out-2" "$other" "${t8[@]}" --state "$TMP/st"
  grep -q "incremental run" "$TMP/out-2.log" || fail "the second run did not continue the state"
  cat "$TMP/out-1/part-000.jsonl" "$TMP/out-2/part-000.jsonl" |
    cmp -s - "$TMP/out-whole/part-000.jsonl" ||
    fail "two runs of a confirming state ($RANKS, then $other ranks) kept other records than one run"
  local dropped unconfirmed
  dropped=$(json_field "$TMP/out-2/metrics.json" dropped)
  unconfirmed=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["minhash_dedup"]["unconfirmed_hits"])' "$TMP/out-2/metrics.json")
  ((dropped > 0 && unconfirmed > 0)) ||
    fail "the second run removed $dropped records with $unconfirmed unconfirmed hits (want both > 0)"
  "$BIN" verify --state "$TMP/st" >"$TMP/verify.log" 2>&1 ||
    { cat "$TMP/verify.log" >&2; fail "the confirming state does not verify"; }
  grep -q "confirmation forms of 56 bytes checked" "$TMP/verify.log" ||
    fail "verify does not say it checked the forms"
  "$BIN" info --state "$TMP/st" | grep -q "confirmation forms of 56 bytes" ||
    fail "info does not show the confirmation forms"
  log "runs on $RANKS then $other ranks = one run: $dropped near copies removed in the second" \
    "($unconfirmed hits unconfirmed)"
  # 2. The scheme guard: another T, or none, is refused naming both.
  corpus "$TMP/third" --files 1 --clusters 10 --seed 51
  local opt said
  for opt in "--confirm-jaccard=0.7|--confirm-jaccard differs: the state has 0.8, this job asks for 0.7" \
    "--split-inputs=off|--confirm-jaccard differs: the state has 0.8, this job asks for off"; do
    rm -rf "$TMP/out-3"
    dedup "$TMP/third" "$TMP/out-3" "$RANKS" "${opt%%|*}" --state "$TMP/st"
    said=$(cat "$TMP/out-3.log")
    [[ $JOB_RC == 2 && $said == *"${opt#*|}"* && ! -e $TMP/out-3 ]] ||
      { echo "$said" >&2; fail "${opt%%|*} on a state of T = 0.8: exit $JOB_RC, want 2"; }
  done
  log "another --confirm-jaccard, or none, refused naming both values"
  # 3. A flipped byte of the forms: the next run and verify refuse it.
  cp -r "$TMP/st" "$TMP/st-bad"
  flip_forms "$TMP/st-bad"
  dedup "$TMP/third" "$TMP/out-bad" "$RANKS" "${t8[@]}" --state "$TMP/st-bad"
  said=$(cat "$TMP/out-bad.log")
  [[ $JOB_RC != 0 && $said == *"/run-"*".h5 forms of tier-2 slice "*"XXH3 checksum mismatch over /tier2/forms"* ]] ||
    { echo "$said" >&2; fail "a flipped byte of /tier2/forms: exit $JOB_RC, want a refusal naming it"; }
  [[ ! -s $TMP/out-bad/part-000.jsonl ]] || fail "the refused run wrote records"
  set +e
  said=$("$BIN" verify --state "$TMP/st-bad" 2>&1)
  local rc=$?
  set -e
  [[ $rc != 0 && $said == *"forms of tier-2 slice "*"/tier2/forms"* ]] ||
    { echo "$said" >&2; fail "verify of a flipped forms byte: exit $rc, want a failure naming it"; }
  log "a flipped byte of /tier2/forms refused by the next run and by verify"
  # query and merge of a confirming state: minhash_query_case.sh,
  # minhash_merge_case.sh.
}

# annotate_check.py INPUT FILTERED BLOOMSHARD DOLMA: one attribute line per
# input line; a valid record is flagged (bloomshard "duplicate": true, dolma
# its whole text's span) exactly when filter mode removed it.
ANNOTATE_CHECK='
import json, sys
inp, filt, bs, dolma = (open(p, "rb").read().splitlines() for p in sys.argv[1:5])
kept = set(filt)
assert len(bs) == len(inp) == len(dolma), "attribute lines are not aligned with the input"
flagged = 0
for line, b, d in zip(inp, bs, dolma):
    b, d = json.loads(b), json.loads(d)
    if "reject" in b:
        assert "reject" in d, line
        continue
    removed = line not in kept
    assert b["duplicate"] == removed, (line[:60], b)
    span = d["attributes"]["bloomshard_duplicate"]
    text = json.loads(line)["text"]
    assert span == ([[0, len(text), 1.0]] if removed else []), (line[:60], d)
    flagged += removed
print("annotate: %d of %d lines flagged as near-duplicates" % (flagged, len(inp)))
'

case_annotate() {
  corpus "$TMP/one" --files 1 --clusters 60 --seed 45
  local opts=("${SMALL[@]}" --split-inputs off)
  dedup_ok "$TMP/one" "$TMP/out-f" "$RANKS" "${opts[@]}"
  dedup_ok "$TMP/one" "$TMP/out-b" "$RANKS" "${opts[@]}" --mode annotate
  dedup_ok "$TMP/one" "$TMP/out-d" "$RANKS" "${opts[@]}" --mode annotate --annotate-format dolma
  "$PY" -c "$ANNOTATE_CHECK" "$TMP/one/part-000.jsonl" "$TMP/out-f/part-000.jsonl" \
    "$TMP/out-b/part-000.jsonl" "$TMP/out-d/part-000.jsonl" ||
    fail "the attribute files do not flag what filter mode removed"
  local m a b
  for m in kept dropped tier2_keys; do
    a=$(json_field "$TMP/out-f/metrics.json" $m)
    b=$(json_field "$TMP/out-b/metrics.json" $m)
    [[ $a == "$b" ]] || fail "metrics $m: filter mode $a, annotate mode $b"
  done
  log "annotate: both formats flag exactly the records filter mode removes"
}

# Annotate mode with confirmation: the estimate and the record matched.
case_annotate_confirm() {
  corpus "$TMP/one" --files 1 --clusters 60 --seed 47
  corpus "$TMP/four" --files 4 --clusters 80 --seed 48 --plain
  local opts=("${SMALL[@]}" --split-inputs off --confirm-jaccard 0.8) fmt m a b
  # 1. One reader: exact, and the flags are filter mode's removals.
  dedup_ok "$TMP/one" "$TMP/out-f" "$RANKS" "${opts[@]}"
  for fmt in bloomshard dolma; do
    dedup_ok "$TMP/one" "$TMP/out-$fmt" "$RANKS" "${opts[@]}" --mode annotate \
      --annotate-format "$fmt"
    oracle --exact --annotate "$fmt" --confirm-jaccard 0.8 --input "$TMP/one" \
      --output "$TMP/out-$fmt"
  done
  "$PY" -c "$ANNOTATE_CHECK" "$TMP/one/part-000.jsonl" "$TMP/out-f/part-000.jsonl" \
    "$TMP/out-bloomshard/part-000.jsonl" "$TMP/out-dolma/part-000.jsonl" ||
    fail "the attribute files do not flag what filter mode removed"
  for m in kept dropped tier2_keys; do
    a=$(json_field "$TMP/out-f/metrics.json" $m)
    b=$(json_field "$TMP/out-bloomshard/metrics.json" $m)
    [[ $a == "$b" ]] || fail "metrics $m: filter mode $a, annotate mode $b"
  done
  grep -q -- "in memory ~[0-9.]* MiB/rank (with their origins)" \
    "$TMP/out-bloomshard.log" || fail "the plan line does not count the positions"
  log "one file: flags, estimates and matches exact in both formats, flags as filter mode's"
  # 2. Several readers: the guarantees; exact at 1 rank.
  dedup_ok "$TMP/four" "$TMP/out-four" "$RANKS" "${SMALL[@]}" --confirm-jaccard 0.8 \
    --mode annotate
  local exact=()
  [[ $RANKS == 1 ]] && exact=(--exact)
  oracle "${exact[@]}" --annotate bloomshard --confirm-jaccard 0.8 --input "$TMP/four" \
    --output "$TMP/out-four"
  log "four files: every match a record sharing a band key at its estimate${exact:+, exact}"
}

# halves WHOLE FIRST SECOND: the first and second half of WHOLE's one file.
halves() {
  local lines half
  lines=$(wc -l <"$1/part-000.jsonl")
  half=$((lines / 2))
  mkdir -p "$2" "$3"
  head -n "$half" "$1/part-000.jsonl" >"$2/part-000.jsonl"
  tail -n +$((half + 1)) "$1/part-000.jsonl" >"$3/part-000.jsonl"
}

# Annotate mode against a state's history (form origins): run A into a
# state in filter or annotate mode, then annotate run B against it on
# another rank count: flags, estimates and matches (run, input, offset)
# exactly the streaming rule's over A then B.
case_confirm_origins() {
  corpus "$TMP/whole" --files 1 --clusters 80 --seed 50
  halves "$TMP/whole" "$TMP/first" "$TMP/second"
  local t8=(--split-inputs off --confirm-jaccard 0.8 "${SMALL[@]}") other=$((RANKS % 3 + 1))
  local mode fmt st
  for mode in filter annotate; do
    st=$TMP/st-$mode
    fmt=bloomshard
    [[ $mode == annotate ]] && fmt=dolma
    dedup_ok "$TMP/first" "$TMP/out-a-$mode" "$RANKS" "${t8[@]}" --mode "$mode" --state "$st"
    dedup_ok "$TMP/second" "$TMP/out-b-$mode" "$other" "${t8[@]}" --mode annotate \
      --annotate-format "$fmt" --state "$st"
    grep -q "incremental run" "$TMP/out-b-$mode.log" || fail "run B did not continue the state"
    oracle --exact --annotate "$fmt" --confirm-jaccard 0.8 --history "$TMP/first" \
      --input "$TMP/second" --output "$TMP/out-b-$mode"
    "$BIN" verify --state "$st" >"$TMP/verify-$mode.log" 2>&1 ||
      { cat "$TMP/verify-$mode.log" >&2; fail "the state of origins does not verify"; }
    grep -q "form origins checked" "$TMP/verify-$mode.log" ||
      fail "verify does not say it checked the form origins"
    "$BIN" info --state "$st" | grep -q "^origins .* form origins" ||
      fail "info does not show the form origins"
  done
  # Both runs' records are matched: some lines name run 0, some run 1.
  local r
  for r in 0 1; do
    grep -q "\"match\":{\"run\":$r," "$TMP/out-b-filter/part-000.jsonl" ||
      fail "no match of run B names run $r"
  done
  grep -q '"bloomshard_match_run":\[\[0,[0-9]*,0\]\]' "$TMP/out-b-annotate/part-000.jsonl" ||
    fail "no dolma match of run B names run 0"
  log "annotate B against a state of A (filter, annotate) on $RANKS then $other ranks:" \
    "matches in both runs, exact"
  # A flipped byte of the origins: the next run and verify refuse it.
  cp -r "$TMP/st-filter" "$TMP/st-bad"
  "$PY" - "$TMP/st-bad" <<'PYEOF' || fail "cannot flip a byte of /tier2/form_origins"
import glob, sys, h5py
for run in sorted(glob.glob(sys.argv[1] + "/run-*.h5")):
    with h5py.File(run, "r") as f:
        d = f["/tier2/form_origins"]
        at = d.id.get_offset() + d.shape[0] * 4
    with open(run, "r+b") as raw:
        raw.seek(at)
        b = raw.read(1)
        raw.seek(at)
        raw.write(bytes([b[0] ^ 0x5A]))
PYEOF
  corpus "$TMP/third" --files 1 --clusters 10 --seed 51
  dedup "$TMP/third" "$TMP/out-bad" "$RANKS" "${t8[@]}" --mode annotate --state "$TMP/st-bad"
  local said
  said=$(cat "$TMP/out-bad.log")
  [[ $JOB_RC != 0 && $said == *"/run-"*".h5 form origins of tier-2 slice "*"XXH3 checksum mismatch over /tier2/form_origins"* ]] ||
    { echo "$said" >&2; fail "a flipped byte of /tier2/form_origins: exit $JOB_RC, want a refusal"; }
  set +e
  said=$("$BIN" verify --state "$TMP/st-bad" 2>&1)
  local rc=$?
  set -e
  [[ $rc != 0 && $said == *"form origins of tier-2 slice "*"/tier2/form_origins"* ]] ||
    { echo "$said" >&2; fail "verify of a flipped origins byte: exit $rc, want a failure"; }
  log "a flipped byte of /tier2/form_origins refused by the next run and by verify"
}

# A confirming state written by the build before form origins
# (tests/data/confirm_state_without_origins, run A over the first half of
# the confirm_state corpus): annotate mode is refused before any work, filter
# mode continues it as before (the bytes of one run over the whole file),
# and the state stays without origins.
case_confirm_old_state() {
  corpus "$TMP/whole" --files 1 --clusters 80 --seed 50
  halves "$TMP/whole" "$TMP/first" "$TMP/second"
  local t8=(--split-inputs off --confirm-jaccard 0.8 "${SMALL[@]}")
  mkdir -p "$TMP/old"
  tar -xzf "$DIR/../data/confirm_state_without_origins/state.tar.gz" -C "$TMP/old"
  local st=$TMP/old/state
  "$BIN" info --state "$st" | grep -q "^origins     none" || fail "info: the old state has origins?"
  dedup "$TMP/second" "$TMP/out-ann" "$RANKS" "${t8[@]}" --mode annotate --state "$st"
  local said
  said=$(cat "$TMP/out-ann.log")
  [[ $JOB_RC == 2 && $said == *"--confirm-jaccard with --mode annotate needs a state whose confirmation forms keep their origins"* ]] ||
    { echo "$said" >&2; fail "annotate on a state without origins: exit $JOB_RC, want 2"; }
  [[ ! -e $TMP/out-ann ]] || fail "the refused annotate run created its output dir"
  log "annotate mode on a state without origins refused (exit 2) before any work"
  dedup_ok "$TMP/whole" "$TMP/out-whole" 1 "${t8[@]}"
  dedup_ok "$TMP/second" "$TMP/out-2" "$RANKS" "${t8[@]}" --state "$st"
  grep -q "incremental run" "$TMP/out-2.log" || fail "the filter run did not continue the old state"
  # The archive holds run A's output too: A then B are one run's bytes.
  cat "$TMP/old/out-a/part-000.jsonl" "$TMP/out-2/part-000.jsonl" |
    cmp -s - "$TMP/out-whole/part-000.jsonl" ||
    fail "filter mode over the state without origins kept other records than one run"
  "$BIN" info --state "$st" | grep -q "^origins     none" ||
    fail "the state continued in filter mode gained origins"
  "$BIN" verify --state "$st" >/dev/null 2>&1 || fail "the continued old state does not verify"
  log "filter mode continues the state without origins as one run, still without origins"
}

# Kills and resumes (on 1..3 ranks) of an annotate run B against a state
# of run A: the bytes of an uninterrupted run B at 1 rank, exact against
# the streaming rule over A then B.
case_confirm_origins_kill() {
  corpus "$TMP/whole" --files 1 --clusters 150 --seed 49
  halves "$TMP/whole" "$TMP/first" "$TMP/second"
  local confirm=(--split-inputs off --confirm-jaccard 0.8)
  local job=(--key-field text --unit minhash --max-reject-fraction 0.1 --batch-bytes 32768
    --slices 32 "${confirm[@]}")
  dedup_ok "$TMP/first" "$TMP/out-a" 2 --batch-bytes 32768 --slices 32 "${confirm[@]}" \
    --state "$TMP/state"
  kill_loop --input "$TMP/second" "${job[@]}" --checkpoint-rounds 1 --mode annotate
  oracle --exact --annotate bloomshard --confirm-jaccard 0.8 --history "$TMP/first" \
    --input "$TMP/second" --output "$TMP/out"
  dedup_ok "$TMP/first" "$TMP/ref-a" 1 --batch-bytes 32768 --slices 32 "${confirm[@]}" \
    --state "$TMP/st-ref"
  dedup_ok "$TMP/second" "$TMP/ref" 1 --batch-bytes 32768 --slices 32 "${confirm[@]}" \
    --mode annotate --state "$TMP/st-ref"
  cmp -s "$TMP/ref/part-000.jsonl" "$TMP/out/part-000.jsonl" ||
    fail "after the kills the attribute file differs from an uninterrupted run's at 1 rank"
  "$BIN" verify --state "$TMP/state" >"$TMP/verify.log" 2>&1 ||
    { cat "$TMP/verify.log" >&2; fail "the killed run's state does not verify"; }
  log "after the kills: annotate against the state's history, the bytes of an uninterrupted run"
}

case "$CASE" in
  dedup | kill | annotate | confirm | confirm_state | confirm_kill | annotate_confirm | \
    confirm_origins | confirm_old_state | confirm_origins_kill) "case_$CASE" ;;
  *) echo "minhash_case.sh: unknown case '$CASE'" >&2; exit 2 ;;
esac
log "PASS in $((SECONDS - start)) s"
