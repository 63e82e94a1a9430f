#!/usr/bin/env bash
# Format-1 states stay usable (issue 10): the checked-in fixture
# tests/data/v1_state/v1_state.tar.gz (written by the format-1 build, see
# make_v1_fixture.sh) is resumed and run incrementally by this build, on
# another rank count than wrote it; the kept key sets equal the fixture's
# expected answers, the outputs pass the exactly-once oracle, and the state
# this build then writes verifies.
#
# usage: v1_state.sh BLOOMSHARD ORACLE_PY FIXTURE_DIR [--mpiexec M] [--np-flag F] [--python P]
# The fixture's run identity holds fixed absolute paths, so it is unpacked at
# /tmp/bloomshard-v1-fixture (this test's own directory; removed at the end).
set -euo pipefail
BIN=$1 ORACLE=$2 FIX=$3
shift 3
MPIEXEC=mpiexec NP_FLAG=-n PY=python3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpiexec) MPIEXEC=$2; shift 2 ;;
    --np-flag) NP_FLAG=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    *) echo "v1_state.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
ROOT=/tmp/bloomshard-v1-fixture
fail() { echo "FAIL [v1 state]: $*" >&2; exit 1; }
log() { echo "[v1 state] $*"; }
cleanup() { [[ ${KEEP_TMP:-0} == 1 ]] && echo "kept $ROOT" || rm -rf "$ROOT"; }
trap cleanup EXIT

rm -rf "$ROOT"
mkdir -p "$ROOT"
tar -C "$ROOT" -xzf "$FIX/v1_state.tar.gz"
"$FIX/make_v1_inputs.sh" "$BIN" "$ROOT"
for s in state-fin state-unf; do
  "$BIN" info --json --state "$ROOT/$s" | grep -q '"format_version": *1[,}]' ||
    { "$BIN" info --state "$ROOT/$s" >&2; fail "$s is not a format-1 state"; }
done

keys() { # kept keys of an output tree, sorted
  find "$1" -name '*.jsonl*' ! -path '*/_rejects/*' -print0 | sort -z |
    xargs -0 -I{} sh -c 'case {} in *.zst) zstd -dcq {};; *.gz) gzip -dc {};; *) cat {};; esac' |
    "$PY" -c 'import json,sys; print("\n".join(sorted(json.loads(l)["id"] for l in sys.stdin if l.strip())))'
}

run() { # RANKS LOG options...
  local ranks=$1 logf=$2
  shift 2
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --key-field id "$@" >"$logf" 2>&1 ||
    { local rc=$?; cat "$logf" >&2; fail "dedup $* exited $rc"; }
}

# 1. Resume the unfinished format-1 run (written by 2 ranks) on 3 ranks.
run 3 "$ROOT/resume.log" --input "$ROOT/in/res" --output "$ROOT/out-res" --state "$ROOT/state-unf"
grep -q "resum" "$ROOT/resume.log" || { cat "$ROOT/resume.log" >&2; fail "the run did not resume"; }
keys "$ROOT/out-res" | cmp -s - "$ROOT/expected-res.txt" || fail "resumed run kept other keys"
"$PY" "$ORACLE" --input "$ROOT/in/res" --output "$ROOT/out-res" --key-field id >/dev/null ||
  fail "oracle rejected the resumed outputs"
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" verify --state "$ROOT/state-unf" >"$ROOT/verify.log" 2>&1 ||
  { cat "$ROOT/verify.log" >&2; fail "verify of the state written after the resume failed"; }
log "resume of a format-1 generation on 3 ranks: same kept keys, exactly once, verifies"

# 2. Today's crawl against the finished format-1 state, on 1 rank.
run 1 "$ROOT/today.log" --input "$ROOT/in/today" --output "$ROOT/out-today" --state "$ROOT/state-fin"
grep -q "incremental run" "$ROOT/today.log" || { cat "$ROOT/today.log" >&2; fail "not incremental"; }
keys "$ROOT/out-today" | cmp -s - "$ROOT/expected-today.txt" || fail "incremental run kept other keys"
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" verify --state "$ROOT/state-fin" >"$ROOT/verify2.log" 2>&1 ||
  { cat "$ROOT/verify2.log" >&2; fail "verify after the incremental run failed"; }
log "incremental run on a finished format-1 state: same kept keys, verifies"
log PASS
