#!/usr/bin/env bash
# Metrics of a run finished by an earlier attempt (docs/reliability.md): a
# kill between the finishing generation and the metrics file leaves a
# finished state and no metrics. The same state results, for real, from a
# whole run whose metrics file is then removed; the next start (same command,
# another rank count too) says "already finished", exits 0 and writes the
# metrics from the state: the run's counters, filter and tier-2 size equal
# the original file's, finished_by_earlier_attempt is true, no segment
# figures. A metrics file already there is left as it is.
#
# usage: finished_metrics.sh BLOOMSHARD --mpiexec M --np-flag F --python P
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse finished_metrics.sh "BIN" "$@"
harness_tmp finished-metrics "finished metrics"

"$BIN" synth --records 30000 --dup-rate 0.3 --files 3 --compress none --seed 7 \
  --out "$TMP/in" >/dev/null
run() {  # RANKS LOG: the same job each time
  timeout 120 "$MPIEXEC" "$NP_FLAG" "$1" "$BIN" dedup --input "$TMP/in" --output "$TMP/out" \
    --state "$TMP/state" --key-field id --capacity 40000 --checkpoint-every 2 \
    --batch-bytes 1048576 --metrics "$TMP/metrics.json" >"$TMP/$2" 2>&1 ||
    { cat "$TMP/$2" >&2; fail "the job ($1 ranks, $2) failed"; }
}

run 2 first.log
[[ -f $TMP/metrics.json ]] || fail "the finished run wrote no metrics"
mv "$TMP/metrics.json" "$TMP/original.json"

for ranks in 2 3; do
  run "$ranks" "again$ranks.log"
  grep -q 'already finished' "$TMP/again$ranks.log" || fail "$ranks ranks: the run was not taken as finished"
  [[ -f $TMP/metrics.json ]] || fail "$ranks ranks: no metrics written from the finished state"
  "$PY" - "$TMP/original.json" "$TMP/metrics.json" <<'PY' || fail "$ranks ranks: metrics differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
same = ["ranks", "input_files", "input_bytes", "records", "kept", "duplicates",
        "batch_duplicates", "dropped", "rejected", "rejected_by_reason", "decided",
        "tier1_absent", "tier1_maybe", "tier2_lookups", "false_positives", "tier2_keys",
        "output_bytes", "bytes_exchanged", "payload_bytes", "rounds", "subrounds"]
bad = [k for k in same if a[k] != b[k]]
for k in ["layers", "bits", "fpr_target"]:
    if a["filter"][k] != b["filter"][k]:
        bad.append("filter." + k)
for la, lb in zip(a["filter"]["layer"], b["filter"]["layer"]):
    for k in ["capacity", "k", "bits", "inserted"]:
        if la[k] != lb[k]:
            bad.append("layer." + k)
if bad:
    sys.exit(f"fields differ from the run's own metrics: {bad}")
if a["finished_by_earlier_attempt"] or not b["finished_by_earlier_attempt"]:
    sys.exit("finished_by_earlier_attempt: run's %s, restart's %s"
             % (a["finished_by_earlier_attempt"], b["finished_by_earlier_attempt"]))
if b["segment_rounds"] != 0 or b["wall_seconds"] != 0:
    sys.exit("the restart reports segment figures it did not have")
PY
  rm "$TMP/metrics.json"
done

# A metrics file already there (the run's own) is kept byte for byte.
cp "$TMP/original.json" "$TMP/metrics.json"
run 2 kept.log
cmp -s "$TMP/original.json" "$TMP/metrics.json" || fail "an existing metrics file was replaced"
echo "finished metrics: written from the state at 2 and 3 ranks, equal to the run's; an existing file kept"
