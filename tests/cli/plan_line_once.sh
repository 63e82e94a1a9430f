#!/usr/bin/env bash
# The plan line a fresh dedup prints at start comes once, from rank 0,
# whatever the rank count: exactly one "bloomshard dedup: plan: N ranks"
# line on 1 rank (no other rank to print it) and on 3 ranks (not one per
# rank).
# usage: plan_line_once.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse plan_line_once.sh "BIN" "$@"
harness_tmp plan-line-once "plan line once"

"$BIN" synth --records 3000 --dup-rate 0.3 --files 3 --compress none --out "$TMP/in" >/dev/null
for ranks in 1 3; do
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --input "$TMP/in" \
    --output "$TMP/out-$ranks" --key-field id --progress 0 >/dev/null 2>"$TMP/$ranks.log" ||
    { cat "$TMP/$ranks.log" >&2; fail "$ranks ranks: dedup failed"; }
  n=$(grep -c "^bloomshard dedup: plan: $ranks ranks, ~" "$TMP/$ranks.log" || true)
  [[ $n == 1 ]] || { cat "$TMP/$ranks.log" >&2; fail "$ranks ranks: $n plan lines (want 1)"; }
done
log "ok"
