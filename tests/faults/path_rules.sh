#!/usr/bin/env bash
# Paths checked before work, and no leftovers (docs/reliability.md, "Paths
# and leftovers"):
#  1. every path a dedup job writes is checked before any work and before
#     anything is created: a --metrics dir that does not exist, an --output
#     through a file or that is a file, a --metrics that is a directory, and
#     --output/--state/--metrics on a real read-only bind mount are refused
#     at once (exit 2) naming the path and the reason; nothing is created;
#  2. the lock file is never put into an input or a foreign dir, never left
#     after a refusal, and is gone after a finished run with or without
#     --state;
#  3. a run stopped without --state says that nothing was saved and how to
#     go on; its re-run is refused naming --overwrite and --state, and
#     --overwrite then gives exactly-once outputs;
#  4. a finished --state run given a new --output is refused (exit 2) naming
#     the dir that holds its outputs; the new dir is not created;
#  5. query and merge check the paths they write the same way.
#
# usage: path_rules.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start path_rules "$@"
make_corpus 100000
ARGS=(--key-field id --batch-bytes 8192)

no_lock_left() { # DIR...: no lock file anywhere below them
  local found
  found=$(find "$@" -name _bloomshard.lock 2>/dev/null || true)
  [[ -z $found ]] || fail "lock file(s) left behind: $found"
}
# A refusal: exit CODE within LIMIT s, the log names WHAT.
refused() { # TAG CODE WHAT
  ((RC == $2)) || fail "$1: exit $RC, want $2"
  grep -qF -- "$3" "$TMP/$1.log" || fail "$1: the refusal does not say '$3'"
}

# --- 1. paths that cannot be written, refused before anything is created.
run_job m1 2 30 --input "$IN" --output "$TMP/o1" --state "$TMP/s1" "${ARGS[@]}" \
  --metrics "$TMP/no-such-dir/metrics.json"
refused m1 2 "--metrics '$TMP/no-such-dir/metrics.json': its directory '$TMP/no-such-dir' does not exist"
[[ ! -e $TMP/o1 && ! -e $TMP/s1 ]] || fail "the refused run created its output or state dir"
grep -q " records, " "$TMP/m1.log" && fail "the refused run did the work first"
echo "not a dir" >"$TMP/afile"
run_job m2 2 30 --input "$IN" --output "$TMP/afile/out" "${ARGS[@]}"
refused m2 2 "--output '$TMP/afile/out': '$TMP/afile' is not a directory"
run_job m3 2 30 --input "$IN" --output "$TMP/afile" "${ARGS[@]}"
refused m3 2 "--output '$TMP/afile': it exists and is not a directory"
mkdir -p "$TMP/adir"
run_job m4 2 30 --input "$IN" --output "$TMP/o4" "${ARGS[@]}" --metrics "$TMP/adir"
refused m4 2 "--metrics '$TMP/adir': it is a directory, not a file"
[[ ! -e $TMP/o4 ]] || fail "the refused run created its output dir"
log "1. missing dir, path through a file, file as dir, dir as file: exit 2 before any work"

# Read-only: a real read-only bind mount (root's permission bits never refuse).
RO=$TMP/ro
mkdir -p "$RO/sub"
if mount --bind "$RO" "$RO" 2>/dev/null && MOUNTS+=("$RO") && mount -o remount,bind,ro "$RO" 2>/dev/null; then
  touch "$RO/probe" 2>/dev/null && fail "the read-only bind mount takes writes"
  for opt in output state metrics; do
    case $opt in
      output) extra=(--output "$RO/out") want="--output '$RO/out': '$RO' is on a read-only file system" ;;
      state) extra=(--output "$TMP/o-ro-$opt" --state "$RO/sub/state")
        want="--state '$RO/sub/state': '$RO/sub' is on a read-only file system" ;;
      metrics) extra=(--output "$TMP/o-ro-$opt" --metrics "$RO/sub/m.json")
        want="--metrics '$RO/sub/m.json': '$RO/sub' is on a read-only file system" ;;
    esac
    run_job ro-$opt 2 30 --input "$IN" "${extra[@]}" "${ARGS[@]}"
    refused ro-$opt 2 "$want"
    [[ ! -e $TMP/o-ro-$opt ]] || fail "ro-$opt: the refused run created its output dir"
  done
  log "1. read-only bind mount: --output, --state and --metrics refused (exit 2), nothing created"
else
  log "1. read-only bind mount not available here: that part skipped"
fi

# --- 2. the lock: never in an input, never in a foreign dir, never left.
run_job l1 2 30 --input "$IN" --output "$IN/gz/out" "${ARGS[@]}"
refused l1 2 "overlap"
[[ ! -e $IN/gz/out ]] || fail "the refused run created a dir inside its input"
run_job l2 2 30 --input "$IN" --output "$TMP/o-l2" --state "$IN/state" "${ARGS[@]}"
refused l2 2 "overlap"
[[ ! -e $IN/state && ! -e $TMP/o-l2 ]] || fail "the refused run created its state or output dir"
mkdir -p "$TMP/foreign"
echo "someone else's" >"$TMP/foreign/notes.txt"
run_job l3 2 30 --input "$IN" --output "$TMP/foreign" "${ARGS[@]}"
refused l3 4 "is not empty and holds no bloomshard run's marker"
[[ $(ls -A "$TMP/foreign") == notes.txt ]] || fail "the refused run left files in a foreign dir: $(ls -A "$TMP/foreign")"
run_job l4 2 30 --input "$IN" --output "$TMP/foreign" --state "$TMP/s-l4" "${ARGS[@]}"
refused l4 4 "is not empty"
[[ $(ls -A "$TMP/foreign") == notes.txt ]] || fail "the refused --state run left files in a foreign dir"
[[ ! -e $TMP/s-l4 ]] || fail "the refused --state run created its state dir"
no_lock_left "$IN"
run_job ok-nostate 2 120 --input "$IN" --output "$TMP/o-ok" "${ARGS[@]}"
((RC == 0)) || fail "a plain run exited $RC"
check_outputs "$TMP/o-ok"
run_job ok-state 2 120 --input "$IN" --output "$TMP/o-oks" --state "$TMP/s-oks" "${ARGS[@]}"
((RC == 0)) || fail "a --state run exited $RC"
[[ ! -e $TMP/s-oks/LOCK ]] || fail "the finished --state run left its LOCK"
# The finished run's output dir is in use: refused, and again no lock left.
run_job ok-again 2 30 --input "$IN" --output "$TMP/o-ok" "${ARGS[@]}"
refused ok-again 4 "--overwrite"
no_lock_left "$IN" "$TMP/o-ok" "$TMP/o-oks" "$TMP/foreign"
log "2. lock: not created in an input or a foreign dir, none left after refusals and finished runs"

# --- 3. a run stopped without --state: what to do, said twice.
OUT3=$TMP/o3
start_job st1 2 --input "$IN" --output "$OUT3" "${ARGS[@]}"
wait_until 60 "outputs of the first rounds" bash -c "[[ -n \$(find '$OUT3' -name '*.gz' -size +8k 2>/dev/null) ]]"
kill -USR1 "$JOB"
wait_job "$JOB" 60 st1
grep -q " records, " "$TMP/st1.log" && fail "the run finished before the stop (make the corpus bigger)"
refused st1 1 "no --state, so nothing was saved"
grep -q "please requeue" "$TMP/st1.log" && fail "a stop without --state asks for a requeue"
grep -qF -- "--overwrite" "$TMP/st1.log" || fail "the stop does not name --overwrite"
no_lock_left "$OUT3"
run_job st2 2 30 --input "$IN" --output "$OUT3" "${ARGS[@]}"
refused st2 4 "pass --overwrite to replace them and start again, or choose an empty dir; for dedup, --state DIR makes a later stop resumable"
run_job st3 2 120 --input "$IN" --output "$OUT3" "${ARGS[@]}" --overwrite
((RC == 0)) || fail "the re-run with --overwrite exited $RC"
check_outputs "$OUT3"
no_lock_left "$OUT3"
log "3. stop without --state: exit 1 naming --overwrite and --state; re-run refused (4) the same way; --overwrite: exactly once"

# --- 4. a finished state and a new --output.
run_job f1 2 30 --input "$IN" --output "$TMP/o-new" --state "$TMP/s-oks" "${ARGS[@]}"
refused f1 2 "already finished for these inputs; its outputs are in '$TMP/o-oks'"
[[ ! -e $TMP/o-new ]] || fail "the refused run created the new output dir"
no_lock_left "$TMP/s-oks"
[[ ! -e $TMP/s-oks/LOCK ]] || fail "the refusal left the state's LOCK"
run_job f2 2 30 --input "$IN" --output "$TMP/o-oks" --state "$TMP/s-oks" "${ARGS[@]}"
((RC == 0)) || fail "the same command on the finished state exited $RC"
grep -q "already finished for these inputs; nothing to do" "$TMP/f2.log" || fail "no 'nothing to do'"
log "4. finished state, new --output: refused (2) naming the old dir; same --output: nothing to do"

# --- 5. query and merge check their written paths the same way.
other() { # TAG COMMAND args...: runs another command of the binary; sets RC
  local tag=$1
  shift
  ln -sf "$BIN" "$MARK/bs-$tag"
  RC=0
  timeout 60 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$MARK/bs-$tag" "$@" >"$TMP/$tag.log" 2>&1 || RC=$?
}
other q1 query --state "$TMP/s-oks" --input "$IN" --output "$TMP/o-q" \
  --metrics "$TMP/no-such-dir/q.json"
refused q1 2 "--metrics '$TMP/no-such-dir/q.json': its directory '$TMP/no-such-dir' does not exist"
[[ ! -e $TMP/o-q ]] || fail "the refused query created its output dir"
other mg1 merge --from "$TMP/s-oks" --from "$TMP/s-oks" --into "$TMP/afile/merged"
refused mg1 2 "--into '$TMP/afile/merged': '$TMP/afile' is not a directory"
log "5. query --metrics in a missing dir, merge --into through a file: exit 2 before any work"
log "ok"
