#!/usr/bin/env bash
# Edges of a start on a state that 1-rank runs make (a refusal made only by
# a multi-rank test may go uncounted: docs/coverage.md), through the real
# binary:
#  - an unfinished state whose output is gone: refused with exit 1 naming
#    the output, before any work, the state's files unchanged;
#  - a reject file that no checkpoint lists (a killed attempt's): deleted
#    by the resume, which then finishes exactly once (its outputs identical
#    to a run that was never stopped);
#  - a tier-2 delta past --max-delta-bytes: it forces checkpoints between
#    rounds, with no --checkpoint-rounds or --checkpoint-every asking;
#  - a finished run whose input was skipped (a gzip member's CRC damaged),
#    the input then repaired in place under the saved size and mtime: with
#    --revalidate-inputs the resume reads on after the damage (the window
#    digest tells the change; every rank must see it, not rank 0 alone), the
#    output then the whole input's; the next start has nothing to do;
#  - a finished filter run's grown input asked again with --mode annotate and
#    --revalidate-inputs: not the same run (never read on in the other mode,
#    which would append annotate lines to filter outputs), so an incremental
#    start into that dir, refused (exit 4), the output unchanged.
# The unfinished state comes from a stop (TERM) while the job is held after
# its first checkpoint (BLOOMSHARD_FAULT_PAUSE_IN_FINISH=after-first-checkpoint).
#
# usage: resume_edges.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse resume_edges.sh "BIN" "$@"
harness_tmp resume-edges "resume edges"
harness_marker
cd "$TMP" || exit 1

mkdir in
"$PY" -c '
import json
with open("in/a.jsonl", "w") as f:
    for i in range(120):
        f.write(json.dumps({"id": "k%03d" % (i % 90), "text": "x" * 1000}) + "\n")'
ln -s "$BIN" "$MARK/bs-edges"
JOB=(--input in --output out --state S --batch-bytes 4096 --checkpoint-rounds 1)

# The reference: the same job never stopped, without a state.
dedup_1rank ref.log --input in --output ref --batch-bytes 4096
((RC == 0)) || { cat ref.log >&2; fail "the reference run failed ($RC)"; }

BLOOMSHARD_FAULT_PAUSE_IN_FINISH=after-first-checkpoint \
  setsid "$MPIEXEC" "$NP_FLAG" 1 "$MARK/bs-edges" dedup --key-field id --progress 0 "${JOB[@]}" \
  >stop.log 2>&1 &
PID=$!
for _ in $(seq 1 300); do
  grep -q "fault pause at after-first-checkpoint" stop.log && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.2
done
grep -q "fault pause at after-first-checkpoint" stop.log || { cat stop.log >&2; fail "the job never paused"; }
kill -TERM "$PID"
wait "$PID" || true
grep -q "checkpointed generation written; exit 75" stop.log || { cat stop.log >&2; fail "the stop was not checkpointed"; }
[[ -s out/a.jsonl ]] || fail "the stopped run committed no output"

# The output gone: refused before any work, naming it; nothing changed.
state_sum() { sha256sum S/ckpt-*.h5 S/LATEST S/RUN.json | sort; }
before=$(state_sum)
mv out/a.jsonl a.saved
dedup_1rank lost.log "${JOB[@]}"
((RC == 1)) || { cat lost.log >&2; fail "a resume without its output: exit $RC, want 1"; }
grep -qF "the run in 'S' cannot be used: its output" lost.log ||
  { cat lost.log >&2; fail "the refusal does not say the output is gone"; }
grep -q "a.jsonl" lost.log || { cat lost.log >&2; fail "the refusal does not name the output"; }
[[ ! -e out/a.jsonl && $(state_sum) == "$before" ]] || fail "the refused start changed the state or the outputs"
mv a.saved out/a.jsonl
log "an unfinished state without its output: refused (exit 1), named"

# A reject file no checkpoint lists: gone after the resume, which finishes exactly once.
mkdir -p out/_rejects
echo '{"stale":"reject of a killed attempt"}' >out/_rejects/rank-0.resume-g99.jsonl
dedup_1rank resume.log "${JOB[@]}"
((RC == 0)) || { cat resume.log >&2; fail "the resume failed ($RC)"; }
grep -q "resuming checkpoint generation" resume.log || { cat resume.log >&2; fail "it did not resume"; }
[[ ! -e out/_rejects/rank-0.resume-g99.jsonl ]] || fail "the unlisted reject file is still there"
cmp out/a.jsonl ref/a.jsonl || fail "the resumed output differs from the run never stopped"
log "an unlisted reject file deleted at the resume; the output identical to the reference"

# --max-delta-bytes: 40,000 keys of 64 bytes pass 1 MiB of delta, so the
# run checkpoints before its end; the same run without it writes only the
# final generation. 1 MiB rounds: the 3 MB input is one round of the
# default 4 MiB in the lockstep layout (a round reads that many input
# bytes), and the delta is checked at a round's end.
"$PY" -c '
import json
with open("big.jsonl", "w") as f:
    for i in range(40000):
        f.write(json.dumps({"id": "%064d" % i}) + "\n")'
mkdir big && mv big.jsonl big/
dedup_1rank delta.log --input big --output dout --state D --max-delta-bytes 1048576 \
  --batch-bytes 1048576
((RC == 0)) || { cat delta.log >&2; fail "the --max-delta-bytes run failed ($RC)"; }
dedup_1rank plain.log --input big --output pout --state P --batch-bytes 1048576
((RC == 0)) || { cat plain.log >&2; fail "the plain run failed ($RC)"; }
((($(cat D/LATEST)) > 1)) || fail "--max-delta-bytes forced no checkpoint (LATEST $(cat D/LATEST))"
(($(cat P/LATEST) == 1)) || fail "without --max-delta-bytes: LATEST $(cat P/LATEST), want 1"
cmp dout/big.jsonl pout/big.jsonl || fail "the outputs differ"
log "--max-delta-bytes 1 MiB: generation $(cat D/LATEST) at the end (1 without it)"

# A skipped input repaired in place: two gzip members, the first one's CRC
# damaged, so records 51-100 are skipped; the repaired file has the same
# size, and its mtime is set back to the damaged one's.
mkdir rin
"$PY" -c '
import gzip, json
def recs(a, b):
    return "".join(json.dumps({"id": "r%03d" % i}) + "\n" for i in range(a, b)).encode()
first, second = gzip.compress(recs(0, 50)), gzip.compress(recs(50, 100))
open("good.gz", "wb").write(first + second)
bad = bytearray(first + second)
bad[len(first) - 8] ^= 0xFF  # the CRC-32 of the first member
open("rin/r.jsonl.gz", "wb").write(bytes(bad))'
touch -r rin/r.jsonl.gz stamp
REPAIR=(--input rin --output rout --state R --on-input-error skip)
dedup_1rank skip.log "${REPAIR[@]}"
((RC == 0)) || { cat skip.log >&2; fail "the run with a damaged member failed ($RC)"; }
grep -q "'r.jsonl.gz' from record 51" skip.log || { cat skip.log >&2; fail "the damaged input was not skipped at record 51"; }
cat good.gz >rin/r.jsonl.gz
touch -r stamp rin/r.jsonl.gz
dedup_1rank repaired.log "${REPAIR[@]}" --revalidate-inputs
((RC == 0)) || { cat repaired.log >&2; fail "the start after the repair failed ($RC)"; }
grep -q "it was skipped there (.*), reading goes on now" repaired.log ||
  { cat repaired.log >&2; fail "the repaired input was not revalidated"; }
grep -q "100 records, 100 kept" repaired.log || { cat repaired.log >&2; fail "the records after the damage were not read"; }
cmp <(gzip -dc good.gz) <(gzip -dc rout/r.jsonl.gz) || fail "the output is not the whole repaired input"
dedup_1rank again.log "${REPAIR[@]}" --revalidate-inputs
((RC == 0)) || { cat again.log >&2; fail "the start after the read-on failed ($RC)"; }
grep -q "already finished for these inputs; nothing to do" again.log ||
  { cat again.log >&2; fail "the start after the read-on is not 'nothing to do'"; }
log "a skipped input repaired in place: read on after the damage (revalidated), then nothing to do"

# The same read on at 2 ranks (every rank takes rank 0's answer).
mkdir rin2
"$PY" -c '
data = bytearray(open("good.gz", "rb").read())
data[data.index(b"\x1f\x8b", 1) - 8] ^= 0xFF
open("rin2/r.jsonl.gz", "wb").write(bytes(data))'
touch -r rin2/r.jsonl.gz stamp2
REPAIR2=(--input rin2 --output rout2 --state R2 --on-input-error skip)
dedup_1rank skip2.log "${REPAIR2[@]}"
((RC == 0)) || { cat skip2.log >&2; fail "the second damaged run failed ($RC)"; }
cat good.gz >rin2/r.jsonl.gz
touch -r stamp2 rin2/r.jsonl.gz
timeout 120 "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup --key-field id --progress 0 \
  "${REPAIR2[@]}" --revalidate-inputs >repaired2.log 2>&1 || { cat repaired2.log >&2; fail "the 2-rank read on failed"; }
grep -q "100 records, 100 kept" repaired2.log || { cat repaired2.log >&2; fail "2 ranks: the records after the damage were not read"; }
cmp <(gzip -dc good.gz) <(gzip -dc rout2/r.jsonl.gz) || fail "2 ranks: the output is not the whole repaired input"
log "the same read on at 2 ranks: the whole input"

mkdir min
"$PY" -c '
import json
with open("min/a.jsonl", "w") as f:
    for i in range(50):
        f.write(json.dumps({"id": "k%02d" % (i % 40)}) + "\n")'
dedup_1rank mode1.log --input min --output mout --state M
((RC == 0)) || { cat mode1.log >&2; fail "the filter run failed ($RC)"; }
echo '{"id":"new"}' >>min/a.jsonl
before=$(sha256sum mout/a.jsonl)
dedup_1rank mode2.log --input min --output mout --state M --mode annotate --revalidate-inputs
((RC == 4)) || { cat mode2.log >&2; fail "the finished filter run read on in annotate mode: exit $RC, want 4"; }
grep -q "output dir 'mout' holds the outputs of an earlier run" mode2.log ||
  { cat mode2.log >&2; fail "the refusal does not name the output dir"; }
[[ $(sha256sum mout/a.jsonl) == "$before" ]] || fail "the refused start changed the filter output"
log "a finished filter run asked again in annotate mode: not read on (exit 4), output unchanged"
log "ok"
