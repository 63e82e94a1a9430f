#!/usr/bin/env bash
# Format-1 states stay usable: the checked-in fixture
# tests/data/v1_state/v1_state.tar.gz (written by the format-1 build, see
# make_v1_fixture.sh) is resumed and run incrementally by this build, on
# another rank count than wrote it; the kept key sets equal the fixture's
# expected answers, the outputs pass the exactly-once oracle, and the state
# this build then writes verifies.
#
# usage: v1_state.sh BLOOMSHARD ORACLE_PY FIXTURE_DIR [--mpiexec M] [--np-flag F] [--python P]
#                    [--archive TAR_GZ --format N]
# --archive/--format run the same checks on another fixture of the same inputs:
# tests/data/main_v2_state (format 2, written by main before the key
# scheme was saved) must resume and run incrementally the same way, and refuse a job
# asking for another key scheme, naming both.
# The fixture's run identity holds fixed absolute paths, so it is unpacked at
# /tmp/bloomshard-v1-fixture (this test's own directory; removed at the end).
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse v1_state.sh "BIN ORACLE FIX --archive=ARCHIVE --format=FORMAT:1" "$@"
ARCHIVE=${ARCHIVE:-$FIX/v1_state.tar.gz}
ROOT=/tmp/bloomshard-v1-fixture
harness_label "format-$FORMAT state"
harness_tmp_at "$ROOT"
tar -C "$ROOT" -xzf "$ARCHIVE"
"$FIX/make_v1_inputs.sh" "$BIN" "$ROOT"
for s in state-fin state-unf; do
  info=$("$BIN" info --json --state "$ROOT/$s")
  [[ $info =~ \"format_version\":\ *$FORMAT[,}] ]] ||
    { echo "$info" >&2; fail "$s is not a format-$FORMAT state"; }
done

# A job asking for another key scheme is refused, naming both sides, and
# leaves the state alone.
for opt in "--key-digest sha256" "--text-normalize ws" "--key-field url"; do
  set +e
  # shellcheck disable=SC2086
  "$BIN" dedup --input "$ROOT/in/today" --output "$ROOT/out-refused" --state "$ROOT/state-fin" \
    $opt >"$ROOT/refused.log" 2>&1
  rc=$?
  set -e
  refused=$(cat "$ROOT/refused.log")
  [[ $rc == 2 && $refused == *"differs: the state has"* ]] ||
    { echo "$refused" >&2; fail "dedup $opt on the old state: exit $rc, not a refusal"; }
done
log "another --key-digest / --text-normalize / --key-field is refused, naming both"

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
log "resume of a format-$FORMAT generation on 3 ranks: same kept keys, exactly once, verifies"

# 2. Today's crawl against the finished format-1 state, on 1 rank.
run 1 "$ROOT/today.log" --input "$ROOT/in/today" --output "$ROOT/out-today" --state "$ROOT/state-fin"
grep -q "incremental run" "$ROOT/today.log" || { cat "$ROOT/today.log" >&2; fail "not incremental"; }
keys "$ROOT/out-today" | cmp -s - "$ROOT/expected-today.txt" || fail "incremental run kept other keys"
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" verify --state "$ROOT/state-fin" >"$ROOT/verify2.log" 2>&1 ||
  { cat "$ROOT/verify2.log" >&2; fail "verify after the incremental run failed"; }
log "incremental run on a finished format-$FORMAT state: same kept keys, verifies"
log PASS
