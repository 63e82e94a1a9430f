#!/usr/bin/env bash
# The plan line dedup prints at start against the run it describes: on a
# synth corpus (1M records, 30% duplicates, 8 zstd files of skewed sizes)
# the sampled record count and the peak RSS per rank must come within 25%
# of the run's metrics, without and with --state; without --state the line
# names no state or checkpoint size, with it the state size must come
# within 25% of the generation on disk. The line must not claim tier-2
# lookups (the sample cannot see them).
# usage: plan_line.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse plan_line.sh "BIN" "$@"
harness_tmp plan-line "plan_line"

"$BIN" synth --records 1000000 --dup-rate 0.3 --files 8 --compress zst --out "$TMP/corpus" \
  >/dev/null

for run in nostate state; do
  args=(--input "$TMP/corpus" --output "$TMP/out-$run" --key-field id
    --metrics "$TMP/$run.json" --progress 0)
  [[ $run == state ]] && args+=(--state "$TMP/state")
  "$MPIEXEC" "$NP_FLAG" 2 "$BIN" dedup "${args[@]}" >"$TMP/$run.out" 2>"$TMP/$run.log" ||
    { cat "$TMP/$run.log"; fail "$run: dedup failed"; }
  n=$(grep -c '^bloomshard dedup: plan: 2 ranks, ~' "$TMP/$run.log" || true)
  [[ $n == 1 ]] || { cat "$TMP/$run.log"; fail "$run: $n plan lines (want 1)"; }
  line=$(grep '^bloomshard dedup: plan: ' "$TMP/$run.log")
  echo "$run: $line"
  if grep -qi 'tier-2 lookups' <<<"$line"; then fail "$run: the line claims tier-2 lookups"; fi
  if [[ $run == nostate ]] && grep -qE 'state|checkpoint' <<<"$line"; then
    fail "nostate: a state or checkpoint size without --state"
  fi
  "$PY" - "$line" "$TMP/$run.json" "$TMP/state" "$run" <<'PY' || fail "$run: the plan line is more than 25% off"
import glob, json, os, re, sys
line, metrics, state_dir, run = sys.argv[1:5]
m = json.load(open(metrics))
records = int(re.search(r"--records (\d+)", line).group(1))
rss = float(re.search(r"peak RSS ~([\d.]+) MiB/rank", line).group(1)) * 1048576
pairs = [("records", records, m["records"]), ("peak RSS per rank", rss, m["max_rss_bytes"])]
if run == "state":
    state = float(re.search(r"state ~([\d.]+) MiB", line).group(1)) * 1048576
    on_disk = sum(os.path.getsize(p) for p in glob.glob(os.path.join(state_dir, "*.h5")))
    pairs.append(("state bytes", state, on_disk))
bad = False
for name, plan, measured in pairs:
    ratio = plan / measured
    print(f"{run}: {name}: plan {plan:.0f}, measured {measured:.0f}, plan/measured {ratio:.3f}")
    bad |= not 0.75 <= ratio <= 1.25
sys.exit(1 if bad else 0)
PY
done
echo "the plan line agrees with the runs within 25%"
