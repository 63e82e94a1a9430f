#!/usr/bin/env bash
# Paragraph dedup against allenai/bff (docs/performance.md, "Paragraph dedup
# against bff"). One corpus of gzip JSONL shards (paragraph_benchmark.sh's
# generator, same seed and shape: documents of 5-50 paragraphs, 30% of them
# repeated from a shared pool; 8 shards, `gzip -6 -n`), deduplicated by
#   A. bloomshard dedup --unit paragraph --key-field text, 2 ranks, gz in, gz out
#   B. bff --whole-paragraphs --min-ngram-size 1 --threads 2, its Bloom filter
#      sized for the corpus's paragraphs at FPR 0.001
# in turn (A B A B ...), each run under /usr/bin/time. Every run is checked:
# both outputs are valid gzip, bff wrote every shard (it exits 0 even when a
# thread fails), and bff removed at least bloomshard's paragraphs, its surplus
# no more than its false positives can explain (3x the expected count at the
# target FPR, plus 10). Prints medians of wall, CPU (user + system) and the
# output bytes, and their ratios. Not a ctest test: minutes of CPU; run it on
# a quiet machine. Exits 0 with "SKIP" when the bff binary is absent; 1 when
# a check fails.
#
# --floors adds, after each pair, the codec work any tool must do on this
# job, each on 2 processes at once (one half of the files each), timed
# whole: F1 the inflate of every input (ISA-L `igzip -dc`, the fastest
# inflate here, as the job's reader), F2 the deflate of bloomshard's
# output text at the job's level (`libdeflate-gzip -6`, as the job's
# writer; the text is decompressed from the pair's output, untimed). Their
# CPU against bff's, pair by pair, is the share of the CPU target that
# the codecs alone take.
#
# usage: bff_paragraph.sh BLOOMSHARD BFF [--gb 0.5588] [--pairs 3] [--dir DIR]
#          [--mpiexec mpiexec] [--floors]
#   --gb    corpus size before compression, in GiB (0.5588: ~600 MB)
#   --dir   keeps the corpus between runs (default: a temp dir, removed after)
set -euo pipefail
BIN=${1:?usage: bff_paragraph.sh BLOOMSHARD BFF [--gb G] [--pairs N] [--dir DIR]}
BFF=${2:?usage: bff_paragraph.sh BLOOMSHARD BFF [--gb G] [--pairs N] [--dir DIR]}
shift 2
GB=0.5588 PAIRS=3 DIR="" MPIEXEC=mpiexec PY=/usr/bin/python3 FPR=0.001 FLOORS=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --floors) FLOORS=1; shift ;;
    --gb) GB=$2; shift 2 ;;
    --pairs) PAIRS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --mpiexec) MPIEXEC=$2; shift 2 ;;
    *) echo "bff_paragraph.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ ! -x $BFF ]]; then
  echo "SKIP: no bff binary at '$BFF' (docs/performance.md says how to build it)"
  exit 0
fi
[[ -x $BIN ]] || { echo "bff_paragraph.sh: no bloomshard binary at '$BIN'" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
KEEP=1
if [[ -z $DIR ]]; then DIR=$(mktemp -d "${TMPDIR:-/tmp}/bloomshard-bff.XXXXXX"); KEEP=0; fi
trap '[[ $KEEP == 1 ]] || rm -rf "$DIR"' EXIT
mkdir -p "$DIR"
IN=$DIR/in
if [[ ! -f $IN/_DONE ]]; then
  rm -rf "$IN"
  mkdir -p "$IN"
  # The paragraph benchmark's generator: the same documents for a GB.
  "$PY" "$HERE/paragraph_corpus.py" "$IN" "$GB"
  # The paragraph count sizes bff's filter (its expected n-gram count).
  "$PY" - "$IN" >"$IN/_PARAGRAPHS" <<'PYEOF'
import glob, json, sys
n = 0
for path in glob.glob(sys.argv[1] + "/*.jsonl"):
    with open(path, encoding="utf-8") as f:
        for line in f:
            n += json.loads(line)["text"].count("\n") + 1
print(n)
PYEOF
  for f in "$IN"/*.jsonl; do gzip -6 -n "$f"; done
  touch "$IN/_DONE"
fi
PARAGRAPHS=$(cat "$IN/_PARAGRAPHS")
PLAIN_BYTES=$(for f in "$IN"/*.jsonl.gz; do gzip -dc "$f"; done | wc -c)
GZ_BYTES=$(du -cb "$IN"/*.jsonl.gz | tail -1 | cut -f1)
# bff's filter for n = PARAGRAPHS at FPR: m = -n ln p / (ln 2)^2 bits.
BFF_BYTES=$("$PY" -c "import math; print(math.ceil(-$PARAGRAPHS*math.log($FPR)/math.log(2)**2/8))")
echo "corpus: $PLAIN_BYTES bytes of JSONL ($GZ_BYTES gzip) in 8 shards, $PARAGRAPHS paragraphs;" \
  "bff filter $BFF_BYTES bytes"

run_bloomshard() {  # $1: run index
  rm -rf "$DIR/out-bs"
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/bs-$1.time" \
    "$MPIEXEC" -n 2 --oversubscribe "$BIN" dedup --input "$IN" --output "$DIR/out-bs" \
    --key-field text --unit paragraph --metrics "$DIR/bs-$1.json" --progress 0 \
    >"$DIR/bs-$1.log" 2>&1 || { cat "$DIR/bs-$1.log" >&2; exit 1; }
  du -cb "$DIR"/out-bs/*.jsonl.gz | tail -1 | cut -f1 >"$DIR/bs-$1.bytes"
}

run_bff() {  # $1: run index
  rm -rf "$DIR/out-bff" "$DIR/bff.filter"
  mkdir -p "$DIR/out-bff"
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/bff-$1.time" \
    "$BFF" --bloom-filter-file "$DIR/bff.filter" --bloom-filter-size "$BFF_BYTES" \
    --expected-ngram-count "$PARAGRAPHS" --min-ngram-size 1 --whole-paragraphs --threads 2 \
    --output-directory "$DIR/out-bff" "$IN"/*.jsonl.gz >"$DIR/bff-$1.log" 2>&1 ||
    { cat "$DIR/bff-$1.log" >&2; exit 1; }
  du -cb "$DIR"/out-bff/*.jsonl.gz | tail -1 | cut -f1 >"$DIR/bff-$1.bytes"
}

# Both outputs complete and valid, and the removals agree (bff's surplus
# within its false positives). Prints the two counts.
check_run() {  # $1: run index
  "$PY" - "$DIR" "$1" "$PARAGRAPHS" "$FPR" <<'PYEOF'
import glob, gzip, json, os, sys
d, i, paragraphs, fpr = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
ins = sorted(os.path.basename(p) for p in glob.glob(f"{d}/in/*.jsonl.gz"))
def kept(out):
    names = sorted(os.path.basename(p) for p in glob.glob(f"{out}/*.jsonl.gz"))
    if names != ins:
        sys.exit(f"FAIL run {i}: {out} holds {names}, not one output per input {ins}")
    n = 0
    for name in names:
        with gzip.open(f"{out}/{name}", "rt", encoding="utf-8") as f:  # whole stream: CRCs checked
            for line in f:
                n += sum(1 for p in json.loads(line)["text"].split("\n") if p)
    return n
bs_removed = json.load(open(f"{d}/bs-{i}.json"))["paragraph_dedup"]["paragraphs_removed"]
bs_kept, bff_kept = kept(f"{d}/out-bs"), kept(f"{d}/out-bff")
bff_removed = paragraphs - bff_kept
if bs_kept + bs_removed != paragraphs:
    sys.exit(f"FAIL run {i}: bloomshard kept {bs_kept} + removed {bs_removed} != {paragraphs}")
surplus = bff_removed - bs_removed
bound = 3 * fpr * bs_kept + 10
ok = 0 <= surplus <= bound
print(f"run {i}: removed bloomshard {bs_removed}, bff {bff_removed} (surplus {surplus}, "
      f"bound {bound:.0f}) {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PYEOF
}

# The codec floors of one pair (--floors): inflate of the inputs, deflate of
# bloomshard's output text, each on 2 processes; "wall cpu" to $DIR/*-$1.time.
run_floors() {  # $1: run index
  local files=("$IN"/*.jsonl.gz) f
  rm -rf "$DIR/plain"
  mkdir -p "$DIR/plain"
  for f in "$DIR"/out-bs/*.jsonl.gz; do gzip -dc "$f" >"$DIR/plain/$(basename "$f" .gz)"; done
  local plain=("$DIR"/plain/*.jsonl)
  # shellcheck disable=SC2016  # the inner script expands its own arguments
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/inflate-$1.time" bash -c '
    half=$(( ($# + 1) / 2 ))
    for f in "${@:1:half}"; do igzip -dc "$f"; done >/dev/null &
    for f in "${@:half+1}"; do igzip -dc "$f"; done >/dev/null
    wait' _ "${files[@]}"
  # shellcheck disable=SC2016
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/deflate-$1.time" bash -c '
    half=$(( ($# + 1) / 2 ))
    for f in "${@:1:half}"; do libdeflate-gzip -6 -c "$f"; done >/dev/null &
    for f in "${@:half+1}"; do libdeflate-gzip -6 -c "$f"; done >/dev/null
    wait' _ "${plain[@]}"
  rm -rf "$DIR/plain"
}
if [[ $FLOORS == 1 ]]; then
  for tool in igzip libdeflate-gzip; do
    command -v $tool >/dev/null || { echo "bff_paragraph.sh: --floors needs $tool" >&2; exit 2; }
  done
fi

for ((i = 1; i <= PAIRS; i++)); do
  run_bloomshard "$i"
  run_bff "$i"
  check_run "$i"
  [[ $FLOORS == 1 ]] && run_floors "$i"
done

"$PY" - "$DIR" "$PAIRS" <<'PYEOF'
import statistics, sys
d, pairs = sys.argv[1], int(sys.argv[2])
def fig(tool):
    rows = []
    for i in range(1, pairs + 1):
        wall, user, system, rss = open(f"{d}/{tool}-{i}.time").read().split()[-4:]
        out = int(open(f"{d}/{tool}-{i}.bytes").read())
        rows.append((float(wall), float(user) + float(system), out, int(rss)))
    return [statistics.median(col) for col in zip(*rows)], rows
(bw, bc, bo, br), brows = fig("bs")
(fw, fc, fo, fr), frows = fig("bff")
ratios = lambda k: statistics.median(b[k] / f[k] for b, f in zip(brows, frows))
print(f"medians of {pairs} pairs (A B A B ...); ratio: median of the per-pair ratios")
print("| tool | wall s | CPU s | output bytes | peak RSS MiB (largest process) |")
print("|---|---|---|---|---|")
print(f"| bloomshard, 2 ranks | {bw:.2f} | {bc:.2f} | {bo:.0f} | {br / 1024:.0f} |")
print(f"| bff, 2 threads | {fw:.2f} | {fc:.2f} | {fo:.0f} | {fr / 1024:.0f} |")
print(f"| ratio bloomshard/bff | {ratios(0):.3f} | {ratios(1):.3f} | {ratios(2):.3f} | |")
import os
if os.path.exists(f"{d}/inflate-1.time"):
    def cpu(tool, i):
        wall, user, system, _ = open(f"{d}/{tool}-{i}.time").read().split()[-4:]
        return float(user) + float(system)
    print()
    print("codec floors (2 processes each), CPU s and CPU per bff's CPU, medians of the pairs:")
    print("| floor | CPU s | of bff's CPU |")
    print("|---|---:|---:|")
    bff_cpu = [r[1] for r in frows]
    for name, tools in [("inflate, `igzip -dc` of the inputs", ["inflate"]),
                        ("deflate, `libdeflate-gzip -6` of the output text", ["deflate"]),
                        ("both", ["inflate", "deflate"]),
                        ("bloomshard, the whole job", None)]:
        if tools is None:
            c = [r[1] for r in brows]
        else:
            c = [sum(cpu(t, i) for t in tools) for i in range(1, pairs + 1)]
        share = statistics.median(x / b for x, b in zip(c, bff_cpu))
        print(f"| {name} | {statistics.median(c):.2f} | {share:.3f} |")
PYEOF
