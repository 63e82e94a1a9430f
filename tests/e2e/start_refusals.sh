#!/usr/bin/env bash
# How a start on a finished state reads the command, through the real
# binary on 1 rank (a refused job of several ranks often loses rank 0's
# coverage counters: mpiexec kills it when another rank's exit 2 comes
# first, docs/coverage.md):
#  1. the same inputs into another --output: refused with exit 2 before any
#     work, naming where the finished run's outputs are and the dir asked
#     for; the new dir is not created, the state and outputs are as they were;
#  2. new inputs into the finished run's own output dir with --overwrite:
#     an incremental run on the finished filter that replaces the dir
#     (without --overwrite it is refused with exit 4: guards.state.incremental).
#
# usage: start_refusals.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse start_refusals.sh "BIN" "$@"
harness_tmp start-refusals "start refusals"
cd "$TMP" || exit 1

"$BIN" synth --records 1500 --dup-rate 0.3 --files 2 --compress none --seed 17 --out in >/dev/null
"$BIN" synth --records 800 --dup-rate 0.3 --files 1 --compress none --seed 18 --out new >/dev/null
files_of() { find "$@" -type f -exec sha256sum {} + | sort; }

dedup_1rank first.log --input in --output out --state S
((RC == 0)) || { cat first.log >&2; fail "the first run failed ($RC)"; }

# --- 1. finished, same inputs, another output dir.
before=$(files_of out S)
dedup_1rank elsewhere.log --input in --output out2 --state S
((RC == 2)) || { cat elsewhere.log >&2; fail "1: exit $RC, want 2"; }
grep -qF "the run in 'S' already finished for these inputs; its outputs are in '$TMP/out', not '$TMP/out2'" \
  elsewhere.log || { cat elsewhere.log >&2; fail "1: the refusal does not name both dirs"; }
[[ ! -e out2 ]] || fail "1: the refused start created '$TMP/out2'"
[[ $(files_of out S) == "$before" ]] || fail "1: the refused start changed the state or the outputs"
log "1. finished run, same inputs, another --output: refused (exit 2) naming both dirs"

# --- 2. new inputs into the used output dir with --overwrite: incremental.
dedup_1rank incremental.log --input new --output out --state S --overwrite
((RC == 0)) || { cat incremental.log >&2; fail "2: exit $RC, want 0"; }
grep -q "incremental run on checkpoint generation" incremental.log ||
  { cat incremental.log >&2; fail "2: the start was not an incremental run"; }
[[ -s out/part-00000.jsonl ]] || fail "2: no output of the new input in 'out'"
[[ -z $(find out -type f ! -newer first.log) ]] ||
  fail "2: files of the first run were left beside the incremental run's: $(find out -type f ! -newer first.log)"
log "2. new inputs, the used output dir, --overwrite: an incremental run that replaced it"
log "ok"
