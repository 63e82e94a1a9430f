#!/usr/bin/env bash
# The capacity a new filter is sized for when --capacity is not given
# (job_setup.cpp, default_capacity). A record is one key, and the estimate
# is the input bytes at 64 per record; under --unit minhash a record is B
# band keys, and the estimate is rank 0's sampled records times B: the
# bytes estimate would size the filter and the tier-2 delta index for ~4x
# the band keys of 2-5 KB documents (+50 MiB a rank on 1 GB, measured in
# docs/performance.md). Checked through the metrics of real runs at 2
# ranks: the minhash layer within [0.5, 2] x the band keys inserted (the
# bytes estimate gives 4.3x here); an explicit --capacity kept as given;
# the record unit's estimate unchanged; an incremental run keeps the
# state's layer.
#
# usage: default_capacity.sh BIN [--mpiexec M] [--np-flag F] [--python P]
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../harness.sh"
harness_parse default_capacity.sh "BIN" "$@"
harness_tmp default-capacity "default capacity"
cd "$TMP" || exit 1

# ~9,000 documents of 2-5 KB in clusters of near copies (3 files):
# ~100k band keys inserted, above the 100k floor of the estimate.
"$PY" "$HERE/../bench/minhash_bench_corpus.py" --bytes 30000000 --files 3 \
  --seed 5 --out-dir corpus >/dev/null || fail "corpus generator failed"

run() { # NP OUT [options...]: a dedup job writing OUT.json
  local np=$1 out=$2
  shift 2
  timeout 150 "$MPIEXEC" "$NP_FLAG" "$np" --oversubscribe "$BIN" dedup --input corpus \
    --output "$out" --key-field text --metrics "$out.json" --overwrite "$@" >"$out.log" 2>&1 ||
    { cat "$out.log" >&2; fail "$out: exit $?"; }
}
field() { # METRICS EXPR: a metrics value (m = the metrics object)
  "$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

run 2 mh2 --unit minhash
cap2=$(field mh2.json 'm["filter"]["layer"][0]["capacity"]')
inserted=$(field mh2.json 'm["minhash_dedup"]["band_keys_inserted"]')
log "minhash: capacity $cap2 for $inserted band keys inserted"
((inserted > 100000)) || fail "the corpus gave only $inserted band keys: under the estimate's floor"
((2 * cap2 >= inserted && cap2 <= 2 * inserted)) ||
  fail "minhash capacity $cap2 is not within [0.5, 2] x the $inserted band keys inserted"

run 2 given --unit minhash --capacity 250000
cap=$(field given.json 'm["filter"]["layer"][0]["capacity"]')
# The layer rounds its bits up to whole words of every slice: a given
# capacity comes back at least as given, within 1%.
((cap >= 250000 && cap <= 252500)) || fail "--capacity 250000 gave a layer of $cap"

# The record unit keeps the bytes estimate: one key per 64 bytes of each
# (plain) input, plus one.
run 2 rec
want=$("$PY" -c 'import os,sys; print(max(100000, sum(os.path.getsize(os.path.join(sys.argv[1], f)) // 64 + 1 for f in os.listdir(sys.argv[1]))))' corpus)
cap=$(field rec.json 'm["filter"]["layer"][0]["capacity"]')
((cap >= want && 100 * cap <= 101 * want)) ||
  fail "record unit: layer of $cap keys, want the bytes estimate $want (within 1%)"

# A state keeps the capacity its first run chose: an incremental run on
# more inputs does not estimate again.
run 2 st1 --unit minhash --state S
mkdir more && head -n 200 corpus/part-00.jsonl >more/extra.jsonl
timeout 150 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup --input corpus more \
  --output st2 --key-field text --unit minhash --state S --metrics st2.json >st2.log 2>&1 ||
  { cat st2.log >&2; fail "incremental run: exit $?"; }
first=$(field st1.json 'm["filter"]["layer"][0]["capacity"]')
again=$(field st2.json 'm["filter"]["layer"][0]["capacity"]')
[[ $first == "$cap2" ]] || fail "with --state the first run's layer is $first, without $cap2"
[[ $again == "$first" ]] || fail "the incremental run's layer is $again, the state's $first"
log "ok"
