#!/usr/bin/env bash
# End-to-end case of windows of minhash states (`dedup --unit minhash
# --window 1`, a slot per run), checked by minhash_window_corpus.py (the
# documented sketch through tests/bench/minhash_reference.py and the window
# rule: a record is removed when one of its band keys occurred in the W runs
# before or earlier in its run).
#
# usage: minhash_window_case.sh --ranks N --bin BLOOMSHARD --dir TESTS_E2E
#                               [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# Three incremental runs on N ranks (three input files a run):
#   - with --window 1: run 1 removes B1 (a near copy of run 0's B: inside the
#     window); run 2 keeps A1 (a near copy of A, which only the expired slot 0
#     held) and removes C1 (near copy of run 1's C) and B2 (a copy of the
#     removed B1, whose band keys run 1 inserted); each run's kept records are
#     the rule's; info lists slots 1 and 2 (ages 1, 0) holding the distinct
#     band keys of runs 1 and 2; merge refuses the windowed state (exit 2);
#   - the same runs on a state without a window: run 2 removes A1 too.
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse minhash_window_case.sh "--ranks=RANKS:1 --bin=BIN* --dir=DIR*" "$@"
CORPUS=$DIR/minhash_window_corpus.py
[[ -f $CORPUS ]] || harness_usage "no minhash_window_corpus.py in --dir $DIR"
"$PY" -c "import numpy, xxhash" 2>/dev/null || harness_usage "--python $PY lacks numpy or xxhash (use /usr/bin/python3)"
harness_tmp "minhash-window-$RANKS" "minhash window, $RANKS ranks"

"$PY" "$CORPUS" gen --out "$TMP/in" || fail "the corpus generator refused its seed"

# runs STATE PREFIX [options...]: the three runs on STATE, outputs PREFIX-R.
runs() {
  local state=$1 prefix=$2 r rc
  shift 2
  for r in 0 1 2; do
    rc=0
    mpi "$RANKS" dedup --input "$TMP/in/run-$r" --output "$prefix-$r" --key-field text \
      --unit minhash --state "$state" "$@" >"$prefix-$r.log" 2>&1 || rc=$?
    [[ $rc == 0 ]] || { cat "$prefix-$r.log" >&2; fail "run $r ($*) exited $rc (want 0)"; }
  done
}
# removed WINDOW PREFIX: the rule's removed ids per run, after checking the
# kept records of PREFIX-0..2 against it.
removed() {
  "$PY" "$CORPUS" check --window "$1" --inputs "$TMP/in/run-"{0,1,2} \
    --outputs "$2-"{0,1,2} || fail "the kept records of $2 differ from the window rule"
}

runs "$TMP/st-w" "$TMP/win" --window 1
got=$(removed 1 "$TMP/win")
want=$'removed run-0: \nremoved run-1: B1\nremoved run-2: B2 C1'
[[ $got == "$want" ]] || fail "with --window 1 the rule removed '$got', want '$want'"
log "--window 1: B1 and C1 (inside the window) and B2 removed, A1 (outside) kept"

"$MPIEXEC" "$NP_FLAG" 1 "$BIN" info --state "$TMP/st-w" --json >"$TMP/info.json" ||
  fail "info of the windowed minhash state failed"
"$PY" - "$TMP/info.json" "$TMP/in" "$DIR" <<'EOF' || fail "info does not list the live slots' band keys"
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[3], "..", "bench"))
import minhash_reference as ref
info = json.load(open(sys.argv[1]))
def run_keys(r):
    d = os.path.join(sys.argv[2], "run-%d" % r)
    return {k for n in os.listdir(d) for line in open(os.path.join(d, n))
            for k in ref.sketch(json.loads(line)["text"])[3]}
got = [(s["slot"], s["age"], s["keys"]) for s in info["slots"]]
want = [(1, 1, len(run_keys(1))), (2, 0, len(run_keys(2)))]
if info["current_slot"] != 2 or got != want:
    sys.exit("info: current slot %s, slots %s; want 2, %s" % (info["current_slot"], got, want))
EOF
rc=0
mpi 1 merge --from "$TMP/st-w" --from "$TMP/st-w" --into "$TMP/merged" >"$TMP/merge.log" 2>&1 || rc=$?
[[ $rc == 2 && $(cat "$TMP/merge.log") == *"windowed state"* ]] ||
  { cat "$TMP/merge.log" >&2; fail "merge of a windowed minhash state exited $rc (want 2, naming the window)"; }
log "info lists slots 1 and 2 with their band keys; merge refuses the windowed state"

runs "$TMP/st-plain" "$TMP/plain"
got=$(removed 99 "$TMP/plain")
want=$'removed run-0: \nremoved run-1: B1\nremoved run-2: A1 B2 C1'
[[ $got == "$want" ]] || fail "without a window the rule removed '$got', want '$want'"
log "without a window A1 is removed too"
