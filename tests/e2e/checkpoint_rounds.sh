#!/usr/bin/env bash
# --checkpoint-rounds C writes a generation every C rounds ("rounds between
# checkpoints"), through the real binary: one rank (its rounds depend on
# --batch-bytes alone, not on timing; --checkpoint-every 0 rules out
# checkpoints by the clock), the same job with C = 1, 2 and 3. A run of R
# rounds ends at generation R/C + 1 (rounded down; the +1 is the finishing
# generation), so C = 1 gives R + 1 and the others must agree with that R.
#
# usage: checkpoint_rounds.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse checkpoint_rounds.sh "BIN" "$@"
harness_tmp checkpoint-rounds "checkpoint rounds"
cd "$TMP" || exit 1

"$BIN" synth --records 3000 --dup-rate 0.3 --files 1 --compress none --seed 5 --out in >/dev/null
declare -A GEN
for c in 1 2 3; do
  timeout 120 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" dedup --input in --output "out$c" --state "s$c" \
    --key-field id --batch-bytes 16384 --checkpoint-rounds "$c" --checkpoint-every 0 \
    --keep-generations 2 >"c$c.log" 2>&1 || { cat "c$c.log" >&2; fail "the job with C = $c failed"; }
  GEN[$c]=$("$BIN" info --state "s$c" --json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["generation"])')
  cmp -s out1/part-00000.jsonl "out$c/part-00000.jsonl" || fail "C = $c kept other records than C = 1"
done
R=$((GEN[1] - 1))
log "generations: C=1 ${GEN[1]}, C=2 ${GEN[2]}, C=3 ${GEN[3]} (R = $R rounds)"
((R >= 12)) || fail "only $R rounds: too few to tell the cadences apart"
((GEN[2] == R / 2 + 1)) || fail "C = 2 ended at generation ${GEN[2]}, want $((R / 2 + 1)) for $R rounds"
((GEN[3] == R / 3 + 1)) || fail "C = 3 ended at generation ${GEN[3]}, want $((R / 3 + 1)) for $R rounds"
log "ok"
