#!/usr/bin/env bash
# Writes state.tar.gz: a confirming minhash state (--confirm-jaccard 0.8,
# key scheme item confirm-jaccard=0.8/b4, no confirm-origins) made by
# BLOOMSHARD over the first half of minhash_case.sh's confirm_state corpus
# (minhash_corpus.py --files 1 --clusters 80 --seed 50), at 1 rank, with
# that run's output (out-a/part-000.jsonl). Run with the build before form
# origins; the tests never regenerate it.
# usage: make_fixture.sh BLOOMSHARD OUT_DIR
set -euo pipefail
bin=$1 out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
e2e=$here/../../e2e
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$e2e/minhash_corpus.py" "$work/whole" --files 1 --clusters 80 --seed 50
lines=$(wc -l <"$work/whole/part-000.jsonl")
mkdir -p "$work/first"
head -n $((lines / 2)) "$work/whole/part-000.jsonl" >"$work/first/part-000.jsonl"
(cd "$work" && "$bin" dedup --input first --output out-a --key-field text --unit minhash \
  --max-reject-fraction 0.1 --split-inputs off --confirm-jaccard 0.8 --batch-bytes 131072 \
  --max-exchange-bytes 4096 --slices 64 --state state)
mkdir -p "$out"
tar -czf "$out/state.tar.gz" -C "$work" state out-a/part-000.jsonl
