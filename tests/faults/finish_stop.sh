#!/usr/bin/env bash
# A stop at any moment of the finish leaves a state that the same command
# resumes or reports finished, and a finished state holds no temporaries
# (docs/reliability.md, "Paths and leftovers"):
#  1. a real SIGTERM to mpiexec while the job finishes (split inputs, so the
#     finish joins them), at each point of the finish: before the join,
#     before the final checkpoint, inside its commit (both files still
#     *.tmp), after it, after the summary; with and without earlier
#     generations. BLOOMSHARD_FAULT_PAUSE_IN_FINISH holds the ranks at the
#     point, so mpiexec's kill that follows its SIGTERM lands there: the
#     moment is chosen, not raced. The same command then exits 0 with
#     exactly-once outputs, and no *.tmp, _ranges part or lock is left;
#  2. the real temporaries of an attempt killed inside its commit, put into a
#     finished state (an attempt whose successor was killed before its prune
#     deleted them): the same command says "nothing to do" and removes them;
#     a *.tmp name that is not ours stays.
#
# usage: finish_stop.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start finish_stop "$@"
# One plain file, split into ranges on 2 ranks: the finish joins them.
IN=$TMP/in
"$BIN" synth --out "$IN" --records 40000 --dup-rate 0.3 --files 1 --seed 14 >/dev/null
UNIQUE=$("$PY" "$ORACLE" --input "$IN" --key-field id --stats |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["unique_keys"])')
ARGS=(--input "$IN" --key-field id --batch-bytes 32768 --split-min-bytes 65536)

leftovers() { # OUT STATE: fails on any temporary, part or lock file
  local found
  found=$(find "$1" "$2" \( -name '*.tmp' -o -name _bloomshard.lock -o -name LOCK \) 2>/dev/null || true)
  [[ -z $found ]] || fail "$3: left behind: $found"
  [[ ! -e $1/_ranges ]] || fail "$3: the parts of split inputs were left in $1/_ranges"
}
ranks_gone() { [[ -z $(rank_pids "$1") ]]; }

# --- 1. SIGTERM at each point of the finish.
POINTS=(before-join before-final-checkpoint in-final-commit after-final-checkpoint after-summary)
for point in "${POINTS[@]}"; do
  for gens in 0 1; do
    tag=$point-$gens
    OUT=$TMP/o-$tag STATE=$TMP/s-$tag
    EXTRA=()
    ((gens == 0)) || EXTRA=(--checkpoint-rounds 25)
    BLOOMSHARD_FAULT_PAUSE_IN_FINISH=$point start_job k-$tag 2 "${ARGS[@]}" --output "$OUT" \
      --state "$STATE" "${EXTRA[@]}"
    wait_until 90 "the pause at $point" grep -q "fault pause at $point" "$TMP/k-$tag.log"
    grep -q "split 1 input(s) into" "$TMP/k-$tag.log" || fail "$tag: the input was not split"
    ((gens == 0)) || [[ -f $STATE/LATEST ]] || fail "$tag: no generation before the finish"
    [[ $point != in-final-commit ]] || compgen -G "$STATE/run-*.h5.tmp" >/dev/null ||
      fail "$tag: no run file *.tmp during the commit"
    kill -TERM "$JOB"
    wait_job "$JOB" 60 k-$tag
    ((RC != 0)) || fail "$tag: mpiexec killed at $point exited 0"
    wait_until 30 "the ranks of k-$tag to end" ranks_gone k-$tag
    run_job r-$tag 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE" "${EXTRA[@]}"
    ((RC == 0)) || fail "$tag: the same command after a SIGTERM at $point exited $RC"
    check_outputs "$OUT"
    leftovers "$OUT" "$STATE" "$tag"
    how=$(grep -o -m1 -E "nothing to do|resuming checkpoint generation [0-9]+" "$TMP/r-$tag.log" ||
      echo "restarted over its own outputs")
    log "1. SIGTERM at $point (earlier generations: $gens): re-run exit 0 ($how), exactly once, no leftovers"
  done
done

# --- 2. real temporaries of a killed attempt in a finished state.
OUT=$TMP/o-t STATE=$TMP/s-t
BLOOMSHARD_FAULT_PAUSE_IN_FINISH=in-final-commit start_job t1 2 "${ARGS[@]}" --output "$OUT" --state "$STATE"
wait_until 90 "the pause in the commit" grep -q "fault pause at in-final-commit" "$TMP/t1.log"
kill -TERM "$JOB"
wait_job "$JOB" 60 t1
wait_until 30 "the ranks of t1 to end" ranks_gone t1
mkdir -p "$TMP/stale"
cp "$STATE"/*.tmp "$TMP/stale/"
run_job t2 2 120 "${ARGS[@]}" --output "$OUT" --state "$STATE"
((RC == 0)) || fail "the run after the kill in the commit exited $RC"
cp "$TMP"/stale/*.tmp "$STATE/"
echo "not ours" >"$STATE/notes.tmp"
STALE=$(cd "$TMP/stale" && ls | tr '\n' ' ')
run_job t3 2 60 "${ARGS[@]}" --output "$OUT" --state "$STATE"
((RC == 0)) || fail "the finished state with stale temporaries: exit $RC"
grep -q "nothing to do" "$TMP/t3.log" || fail "the finished state was not reported finished"
[[ -f $STATE/notes.tmp ]] || fail "a *.tmp that is not ours was deleted"
rm "$STATE/notes.tmp"
leftovers "$OUT" "$STATE" "finished state with stale temporaries"
check_outputs "$OUT"
log "2. stale temporaries of a killed commit ($STALE) removed by the next start of the finished state; notes.tmp kept"
log "ok"
