#!/usr/bin/env bash
# The output dir's guard and marker through the real binary under mpiexec
# (docs/reliability.md, "Output dirs"): a fresh run writes the marker
# `_bloomshard_run.json` (exact bytes) and its list of mirrored outputs; a
# used dir is refused with exit 4 naming the marker, a foreign one naming
# what it lacks, both untouched; a dir holding only a stale lock file is as
# good as empty; --overwrite removes exactly the outputs the listed run
# wrote (mirrors, rejects, parts of split inputs, the marker) and keeps
# anything else, then lists the new run's outputs.
#
# usage: output_dir.sh BIN [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
# KEEP_TMP=1 keeps the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/guard_expect.sh"
harness_parse output_dir.sh "BIN --ranks=RANKS:2" "$@"
harness_tmp "guards-output-dir" 'output dir, $RANKS ranks'
cd "$TMP" || exit 1

mkdir -p in/sub in2
printf '{"id":"a"}\n{"id":"b"}\n' >in/a.jsonl
printf '{"id":"a"}\n{"id":"c"}\n' >in/sub/b.jsonl
cp in/a.jsonl in2/a.jsonl
run_mpi() { "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" "$@"; }
JOB=(dedup --key-field id)

# marker_is DIR OUTPUTS LIST: the marker's bytes and the list of mirrors.
marker_is() {
  local want
  want=$(printf '{\n  "tool": "bloomshard",\n  "outputs": %s,\n  "rejects_dir": "_rejects"\n}' "$2")
  [[ -f $1/_bloomshard_run.json ]] || fail "$1: no marker _bloomshard_run.json"
  [[ $(cat "$1/_bloomshard_run.json") == "$want" ]] ||
    fail "$1: marker is '$(cat "$1/_bloomshard_run.json")', want '$want'"
  [[ $(cat "$1/_bloomshard_run.json.list") == "$3" ]] ||
    fail "$1: marker list is '$(cat "$1/_bloomshard_run.json.list")', want '$3'"
}

log "1. a fresh run writes the marker and the list of its mirrors"
run_case fresh run_mpi "${JOB[@]}" --input in --output out
[[ $RC == 0 ]] || { cat fresh.log >&2; fail "fresh run: exit $RC"; }
marker_is out 2 $'a.jsonl\nsub/b.jsonl'
[[ -f out/sub/b.jsonl && -d out/_rejects ]] || fail "fresh run: mirror or _rejects missing"

log "2. a used dir without --overwrite: exit 4 naming the marker, untouched"
WATCH=(out)
expect_refused used 4 "output dir 'out' holds the outputs of an earlier run \\(_bloomshard_run.json\\)" \
  "pass --overwrite" -- run_mpi "${JOB[@]}" --input in --output out

log "3. a foreign file: exit 4 naming the missing marker, untouched"
mkdir foreign
echo keep >foreign/notes.txt
WATCH=(foreign)
expect_refused foreign 4 "output dir 'foreign' is not empty and holds no bloomshard run's marker" -- \
  run_mpi "${JOB[@]}" --input in --output foreign

log "4. only a stale lock file (a killed run's): as good as empty"
mkdir stale
: >stale/_bloomshard.lock
run_case stale run_mpi "${JOB[@]}" --input in2 --output stale
[[ $RC == 0 ]] || { cat stale.log >&2; fail "a dir holding only _bloomshard.lock: exit $RC, want 0"; }
marker_is stale 1 'a.jsonl'

log "5. --overwrite removes what the listed run wrote, keeps the rest"
echo keep >out/notes.txt
mkdir -p out/_ranges/sub
echo part >out/_ranges/sub/b.jsonl.part-1
echo old >out/_rejects/rank-9.jsonl
run_case overwrite run_mpi "${JOB[@]}" --input in2 --output out --overwrite
[[ $RC == 0 ]] || { cat overwrite.log >&2; fail "--overwrite: exit $RC"; }
[[ ! -e out/sub/b.jsonl ]] || fail "--overwrite left the earlier run's mirror sub/b.jsonl"
[[ ! -e out/_ranges ]] || fail "--overwrite left the earlier run's _ranges"
[[ ! -e out/_rejects/rank-9.jsonl ]] || fail "--overwrite left an earlier reject file"
[[ $(cat out/notes.txt) == keep ]] || fail "--overwrite removed a file no run listed"
[[ $(cat out/a.jsonl) == $'{"id":"a"}\n{"id":"b"}' ]] || fail "--overwrite: a.jsonl is '$(cat out/a.jsonl)'"
marker_is out 1 'a.jsonl'

log "6. --overwrite beside a foreign file: written, the file kept"
run_case beside run_mpi "${JOB[@]}" --input in2 --output foreign --overwrite
[[ $RC == 0 ]] || { cat beside.log >&2; fail "--overwrite into a foreign dir: exit $RC"; }
[[ $(cat foreign/notes.txt) == keep ]] || fail "--overwrite removed foreign/notes.txt"
marker_is foreign 1 'a.jsonl'
log "ok"
