#!/usr/bin/env bash
# shellcheck disable=SC2034 # WATCH and the case variables are read by guard_expect.sh
# The Python module's refusals of a state it cannot read the way it was
# written (docs/guards.md, src/python/read_only_state.cpp), on a real state
# made by the real binary under mpiexec, one header attribute rewritten with
# h5py per case: a normalization label this build does not know, a Unicode
# version other than this build's, and a generation file holding another
# generation. Each must raise bloomshard.StateError naming the file and
# both values, and leave the state as it was; the intact state opens and
# answers (the control).
#
# usage: python_guards.sh BIN --module-dir DIR [--ranks N] [--mpiexec M] [--np-flag F] [--python P]
# DIR holds the built package (bloomshard/); P imports h5py. KEEP_TMP=1 keeps the dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/guard_expect.sh"
harness_parse python_guards.sh "BIN --module-dir=MODULE_DIR* --ranks=RANKS:2" "$@"
MODULE_DIR=$(readlink -f "$MODULE_DIR")
harness_tmp guards-python 'guards python, $RANKS ranks'
cd "$TMP" || exit 1
export PYTHONPATH=$MODULE_DIR
"$PY" -c 'import h5py, bloomshard' || harness_usage "$PY cannot import h5py and bloomshard"

mkdir in
for i in $(seq 0 599); do echo "{\"id\":\"Key-$((i % 400))\"}"; done >in/a.jsonl
run_case make-S "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input in \
  --output out --state S --key-field id --normalize nfc
[[ $RC == 0 ]] || { cat "$TMP/make-S.log" >&2; fail "making the state: exit $RC"; }
G=$(cat S/LATEST)
G=${G//[!0-9]/}

# open_state DIR [GENERATION]: opens it and prints whether a stored key is
# present (the control prints True).
open_state() {
  "$PY" - "$@" <<'EOF'
import sys, bloomshard
g = int(sys.argv[2]) if len(sys.argv) > 2 else None
s = bloomshard.open_state(sys.argv[1], generation=g)
print("Key-7 present:", s.contains(["Key-7"])[0])
EOF
}

# set_attr FILE NAME VALUE: a string attribute of the root rewritten as the
# writer stores it (fixed length, NUL-terminated).
set_attr() {
  "$PY" - "$@" <<'EOF'
import sys, h5py, numpy as np
path, name, value = sys.argv[1:4]
with h5py.File(path, "r+") as f:
    del f.attrs[name]
    f.attrs.create(name, np.array(value.encode(), dtype="S%d" % (len(value) + 1)))
EOF
}

WATCH=(S)
expect_refused python.control 0 "Key-7 present: True" -- open_state S

cp -a S S-label
set_attr "S-label/ckpt-$G.h5" normalization "nfd/v1 unicode 15.0.0"
WATCH=(S-label)
expect_refused python.normalization_label 1 "StateError: .*ckpt-$G.h5: normalization 'nfd/v1 unicode 15.0.0' is not one this build knows" -- \
  open_state S-label

cp -a S S-unicode
set_attr "S-unicode/ckpt-$G.h5" normalization "nfc/v1 unicode 14.0.0"
WATCH=(S-unicode)
expect_refused python.unicode_version 1 "StateError: .*ckpt-$G.h5: normalization 'nfc/v1 unicode 14.0.0' needs unicode 14.0.0, this build has unicode 15.0.0" -- \
  open_state S-unicode

cp -a S S-generation
cp "S-generation/ckpt-$G.h5" "S-generation/ckpt-$((G + 5)).h5"
WATCH=(S-generation)
expect_refused python.generation 1 "StateError: .*ckpt-$((G + 5)).h5 holds generation $G, not $((G + 5))" -- \
  open_state S-generation $((G + 5))
log "every refusal of the Python module named the file and both values"
