#!/usr/bin/env bash
# Damaged header attributes (no checksum covers them): a real state, made by
# the real binary on 3 ranks, gets one attribute that says how keys are
# located or tested changed with h5py (hash_seed, num_slices, hash_scheme,
# bloom_layout, key_encoding, normalization, initial_capacity, fpr_target,
# tightening, and a layer's k, blocks_per_slice, capacity), and then
#   query (3 ranks), verify (3 ranks), info, and an incremental dedup on
#   the state (3 ranks, the job's --hash-seed/--normalize set to the
#   damaged header's, so the job's own checks do not stop it first)
#     -> exit 1, a message naming the attribute, no answer written
#        (no query output, no dedup output), and the error once in
#        the output (not once per rank);
# the same state intact answers every key (the check refuses nothing that
# is sound). Also at 3 ranks: a state whose run file is missing gives its
# error once.
#
# usage: header_guard.sh BIN [--mpiexec M] [--np-flag F] [--python P]
# P must import h5py (Debian's /usr/bin/python3). KEEP_TMP=1 keeps the dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse header_guard.sh "BIN" "$@"
"$PY" -c 'import h5py' 2>/dev/null || harness_usage "$PY cannot import h5py"

CASE=setup
harness_tmp header-guard 'header_guard, $CASE'
cd "$TMP"
run3() { "$MPIEXEC" "$NP_FLAG" 3 "$BIN" "$@"; }

# Keys with upper-case letters, kept under --normalize none: a header that
# claims nfc-casefold is then caught by the stored keys themselves.
mkdir -p in in2
"$PY" - <<'EOF'
import json
for f in range(2):
    with open(f"in/part-{f}.jsonl", "w") as out:
        for i in range(1500):
            n = (f * 1500 + i) % 2100  # 900 duplicates
            out.write(json.dumps({"id": f"Key-{n:05d}", "text": f"record {f}-{i}"}) + "\n")
with open("in2/new.jsonl", "w") as out:
    for i in range(400):
        out.write(json.dumps({"id": f"New-{i:05d}", "text": f"new {i}"}) + "\n")
EOF
# In the arrival order: the normalization cases below patch the whole text,
# which in a first-copy state also carries the input-order mark.
run3 dedup --input in --output out --state state --key-field id --normalize none \
  --capacity 20000 --kept-copy arrival >dedup.log 2>&1 || { cat dedup.log >&2; fail "dedup of the corpus fails"; }
ls state/ckpt-*.h5 >/dev/null || fail "no checkpoint written"

# The intact state: every key answered, verify and info pass.
run3 query --state state --input in --output q-intact >q.log 2>&1 ||
  { cat q.log >&2; fail "query on the intact state fails"; }
grep -q "3000 hits" q.log || { cat q.log >&2; fail "query on the intact state misses keys"; }
run3 verify --state state >v.log 2>&1 || { cat v.log >&2; fail "verify fails on the intact state"; }
"$BIN" info --state state >i.log 2>&1 || { cat i.log >&2; fail "info fails on the intact state"; }
grep -q "^header      checked:" i.log || { cat i.log >&2; fail "info does not say it checked the header"; }
log "intact state: 3000 hits, verify and info ok"

# patch FILE OBJECT ATTRIBUTE VALUE: the attribute rewritten in its own type
# (a string as fixed-length, NUL-terminated, as the writer stores it).
patch() {
  "$PY" - "$@" <<'EOF'
import sys, h5py, numpy as np
path, obj, name, value = sys.argv[1:5]
with h5py.File(path, "r+") as f:
    attrs = f[obj].attrs
    dt = attrs.get_id(name).dtype
    if dt.kind == "S":
        del attrs[name]
        attrs.create(name, np.array(value.encode(), dtype="S%d" % (len(value) + 1)))
    elif dt.kind == "f":
        attrs.modify(name, np.array(float(value), dtype=dt))
    else:
        attrs.modify(name, np.array(int(value), dtype=dt))
EOF
}
attr() { # FILE OBJECT ATTRIBUTE -> its value
  "$PY" -c 'import sys, h5py
v = h5py.File(sys.argv[1], "r")[sys.argv[2]].attrs[sys.argv[3]]
print(v.decode() if isinstance(v, bytes) else v)' "$@"
}
# No file holding answers: query and dedup write records only to mirrored
# part files (metadata starts with '_').
no_records() { # DIR
  [[ -z $(find "$1" -type f -not -path '*/_*' -size +0c 2>/dev/null) ]]
}
# once TEXT FILE: TEXT occurs exactly once in FILE (not once per rank).
once() {
  local n
  n=$(grep -o -F -- "$1" "$2" | wc -l)
  ((n == 1)) || { cat "$2" >&2; fail "'$1' occurs $n times in $(basename "$2"), not once"; }
}

# check_case OBJECT ATTRIBUTE VALUE NAMED [NORMALIZE [DEDUP_RC]]: the damaged
# attribute is refused by every command, with a message matching NAMED (an
# ERE); dedup runs with --normalize NORMALIZE (default none) and must exit
# DEDUP_RC (default 1; 2 where the job's own option check refuses first).
check_case() {
  local obj=$1 name=$2 value=$3 named=$4 normalize=${5:-none} dedup_rc=${6:-1} f rc seed
  CASE="$obj $name=$value"
  rm -rf s q o
  cp -r state s
  for f in s/ckpt-*.h5; do patch "$f" "$obj" "$name" "$value"; done
  f=$(ls s/ckpt-*.h5 | head -1)
  set +e
  run3 query --state s --input in --output q >q.log 2>&1
  rc=$?
  set -e
  ((rc == 1)) || { cat q.log >&2; fail "query exits $rc, not 1"; }
  grep -Eq "$named" q.log || { cat q.log >&2; fail "query does not name the attribute ($named)"; }
  ! grep -q "hits written" q.log || { cat q.log >&2; fail "query answered"; }
  no_records q || fail "query wrote answers: $(find q -type f -size +0c)"
  # One rank's line (the 3 ranks each check their own keys).
  [[ $(grep -Ec "$named" q.log) == 1 ]] || { cat q.log >&2; fail "query names it on more than one line"; }

  set +e
  run3 verify --state s >v.log 2>&1
  rc=$?
  set -e
  ((rc == 1)) || { cat v.log >&2; fail "verify exits $rc, not 1"; }
  grep -Eq "$named" v.log || { cat v.log >&2; fail "verify does not name the attribute"; }
  grep -q "$f" v.log || { cat v.log >&2; fail "verify does not name the file"; }

  set +e
  "$BIN" info --state s >i.log 2>&1
  rc=$?
  set -e
  ((rc == 1)) || { cat i.log >&2; fail "info exits $rc, not 1"; }
  grep -Eq "$named" i.log || { cat i.log >&2; fail "info does not name the attribute"; }

  seed=$(attr "$f" / hash_seed 2>/dev/null || echo 0)
  set +e
  run3 dedup --input in2 --output o --state s --key-field id --normalize "$normalize" \
    --hash-seed "$seed" >d.log 2>&1
  rc=$?
  set -e
  ((rc == dedup_rc)) || { cat d.log >&2; fail "incremental dedup exits $rc, not $dedup_rc"; }
  grep -Eq "$named" d.log || { cat d.log >&2; fail "dedup does not name the attribute"; }
  no_records o || fail "dedup wrote records: $(find o -type f -size +0c)"
  log "refused by query, verify, info and dedup"
}

L=/bloom/layer_0
S=state/ckpt-1.h5
[[ -f $S ]] || S=$(ls state/ckpt-*.h5 | tail -1)
check_case / hash_seed $(($(attr "$S" / hash_seed) % 1000 + 1)) "hash_seed"
check_case / num_slices $(($(attr "$S" / num_slices) - 1)) "num_slices"
check_case / hash_scheme "xxh3-128/v2" "hash.scheme" none 2
check_case / bloom_layout "block512-k/v2" "(bloom_layout|Bloom layout)" none 2
check_case / key_encoding "utf-16" "key_encoding"
check_case / normalization "nfc-casefold/v2 unicode 15.0.0" "normalization" nfc-casefold
check_case / normalization "nfd/v1 unicode 15.0.0" "normalization" none 2
check_case / initial_capacity 30000 "initial_capacity"
check_case / fpr_target 0.01 "fpr_target"
check_case / tightening 0.25 "tightening"
check_case $L k $(($(attr "$S" $L k) + 1)) "layer_0 attributes \(capacity [0-9]+, k "
check_case $L blocks_per_slice $(($(attr "$S" $L blocks_per_slice) * 2)) "blocks_per_slice"
check_case $L capacity 30000 "layer_0 attributes \(capacity 30000"

# A missing run file on 3 ranks: every rank finds it, the error is given once.
CASE="missing run file"
rm -rf s q
cp -r state s
rm s/run-*.h5
set +e
run3 query --state s --input in --output q >q.log 2>&1
set -e
once "missing run file" q.log
log "one line for 3 ranks"
echo "header_guard: all cases passed"
