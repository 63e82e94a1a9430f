#!/usr/bin/env bash
# --max-delta-bytes bounds the tier-2 delta held in memory since the last
# checkpoint: a round that leaves it over the budget makes every rank write
# a generation, whatever --checkpoint-rounds says (docs: design.md
# "Memory"). Through the real binary on one rank: 60,000 distinct 64-byte
# keys (several MiB of delta) in ~60 rounds of 64 KiB, a generation only
# every 100,000 rounds by count and never by the clock; with the smallest
# budget (1 MiB) the run writes more generations than the finishing one,
# with a budget larger than the whole delta only that one. The same kept
# lines either way.
#
# usage: delta_budget.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse delta_budget.sh "BIN" "$@"
harness_tmp delta-budget "delta budget"
cd "$TMP" || exit 1

mkdir in
"$PY" -c '
import hashlib
with open("in/keys.txt", "w") as f:
    for i in range(60000):
        f.write(hashlib.sha256(str(i).encode()).hexdigest() + "\n")'
declare -A CKPTS
for budget in 1048576 1073741824; do
  timeout 120 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" dedup --input in --output "out$budget" --state "s$budget" \
    --max-delta-bytes "$budget" --batch-bytes 65536 --checkpoint-rounds 100000 --checkpoint-every 0 \
    --metrics "m$budget.json" >"r$budget.log" 2>&1 || fail "the job with budget $budget failed: $(cat "r$budget.log")"
  CKPTS[$budget]=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoints"])' "m$budget.json")
done
log "generations: budget 1 MiB ${CKPTS[1048576]}, 1 GiB ${CKPTS[1073741824]}"
((CKPTS[1073741824] == 1)) || fail "a budget above the whole delta forced ${CKPTS[1073741824]} generations, want 1"
((CKPTS[1048576] >= 3)) || fail "a 1 MiB budget over several MiB of delta wrote ${CKPTS[1048576]} generations, want >= 3"
cmp -s out1048576/keys.txt out1073741824/keys.txt || fail "the forced generations changed the kept lines"
[[ $(wc -l <out1048576/keys.txt) == 60000 ]] || fail "not every distinct line kept"
log "ok"
