#!/usr/bin/env bash
# The input order's retractions as rows of a generation (input_order version
# 3, docs/checkpoint-format.md "The input order's saved memory"): a
# --kept-copy first run on 2 ranks stopped (SIGTERM) while paused after its
# first checkpoint holds retractions waiting for the end pass as
# /input_order/retracted_rows, counted in the manifest, not listed there;
# info and verify count them. A copy of the state resumes on 3 ranks with
# every output the 1-rank run's bytes (each retraction restored on its
# slice's new owner, exactly once). Then, in every generation of another
# copy: a retracted row's tag that names no record (its slice's checksum
# fixed) is refused by the resume naming the file, the dataset, the slice
# and the tag; a flipped byte (checksum left) is refused by verify naming
# the dataset and the slice; a manifest whose retracted_rows count is not
# the rows' (its checksum fixed, so only the count check can see it) is
# refused by the resume and by verify, both naming the dataset and the two
# counts.
#
# usage: input_order_retracted_rows.sh BLOOMSHARD E2E_DIR [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_order_retracted_rows.sh "BIN EDIR" "$@"
EDIR=$(readlink -f "$EDIR")
harness_tmp input-order-retracted "input-order retracted rows"
harness_marker
cd "$TMP"
"$PY" "$EDIR/input_order_corpus.py" make in --files 6 --records 1500 --big-records 0 --seed 12
ln -s "$BIN" "$MARK/bs-retracted"
ARGS=(dedup --input "$TMP/in" --key-field id --kept-copy first --batch-bytes 65536 --progress 0)

BLOOMSHARD_FAULT_PAUSE_IN_FINISH=after-first-checkpoint \
  setsid "$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$MARK/bs-retracted" "${ARGS[@]}" \
  --output "$TMP/out" --state "$TMP/st" --checkpoint-rounds 2 >first.log 2>&1 &
PID=$!
for _ in $(seq 1 300); do
  grep -q "fault pause at after-first-checkpoint" first.log && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.2
done
grep -q "fault pause at after-first-checkpoint" first.log || fail "the job never paused: $(cat first.log)"
kill -TERM "$PID"
wait "$PID" || true
grep -q "checkpointed generation written; exit 75" first.log || fail "the stop was not checkpointed: $(cat first.log)"

latest() { echo "$1/ckpt-$(cat "$1/LATEST").h5"; }
h5dump -a /normalization "$(latest st)" | grep -q "input-order/v3" || fail "no input-order/v3 mark"
manifest=$(h5dump -d /manifest_json "$(latest st)")
[[ $manifest =~ \"retracted_rows\":([0-9]+) ]] || fail "the manifest does not count retracted rows"
count=${BASH_REMATCH[1]}
((count > 0)) || fail "no retraction waits: the test would test nothing"
"$BIN" info --json --state st >info.json
"$PY" -c 'import json,sys; d=json.load(open("info.json")); sys.exit(not (d["input_order_version"] == 3 and d["input_order_retracted"] == int(sys.argv[1]) and d["input_order_retracted_saved_as"] == "rows"))' "$count" ||
  fail "info does not count the $count retracted rows: $(cat info.json)"
mpi 2 verify --state st >verify.log 2>&1 || fail "verify: $(cat verify.log)"
grep -q ", $count retracted rows checked" verify.log || fail "verify checked no retracted row: $(cat verify.log)"
log "stopped after its first checkpoint: $count retractions as rows, counted by info and verify"

cp -r st st-damaged
cp -r st st-flipped
cp -r st st-miscounted
cp -r out out-damaged
mpi 1 "${ARGS[@]}" --output "$TMP/out1" >r1.log 2>&1 || fail "the 1-rank run failed: $(cat r1.log)"
mpi 3 "${ARGS[@]}" --output "$TMP/out" --state "$TMP/st" --checkpoint-rounds 2 >resume.log 2>&1 ||
  fail "the resume failed: $(cat resume.log)"
"$PY" "$EDIR/input_order_corpus.py" check in out || fail "the resume: not the first copies in input order"
while IFS= read -r f; do
  case $f in
    *.gz) cmp -s <(gzip -dc "out1/$f") <(gzip -dc "out/$f") ;;
    *.zst) cmp -s <(zstd -qdc "out1/$f") <(zstd -qdc "out/$f") ;;
    *) cmp -s "out1/$f" "out/$f" ;;
  esac || fail "$f differs from the 1-rank run's bytes"
done < <(cd out1 && find . -path ./_rejects -prune -o -type f -print)
log "resumed on 3 ranks: every output the 1-rank run's bytes"

# Damage in every generation: row 0's tag made 1 (its slice's checksum
# fixed), or one byte of the rows flipped (checksum left as it was).
/usr/bin/python3 - st-damaged st-flipped <<'PYEOF' || fail "cannot damage the retracted rows"
import glob, sys
import h5py, numpy, xxhash
damaged = 0
for fix, root in ((True, sys.argv[1]), (False, sys.argv[2])):
    for path in glob.glob(root + "/ckpt-*.h5"):
        with h5py.File(path, "r+") as h:
            rows = h["input_order/retracted_rows"][()]
            if rows.shape[0] == 0:
                continue
            offsets = h["input_order/retracted_offsets"][()]
            s = int(numpy.searchsorted(offsets, 1, side="left")) - 1  # the slice of row 0
            rows[0] = numpy.uint64(1) if fix else rows[0] ^ numpy.uint64(0x10)
            h["input_order/retracted_rows"][0] = numpy.uint64(rows[0])
            if fix:
                end = 3 * int(offsets[s + 1])
                h["input_order/retracted_checksums"][s] = numpy.uint64(
                    xxhash.xxh3_64_intdigest(rows[:end].astype("<u8").tobytes()))
            damaged += 1
sys.exit(0 if damaged >= 2 else 1)
PYEOF
rm -rf out && mv out-damaged out
rc=0
mpi 2 "${ARGS[@]}" --output "$TMP/out" --state "$TMP/st-damaged" >dmg.log 2>&1 || rc=$?
((rc != 0)) || fail "a damaged retracted row was resumed: $(cat dmg.log)"
grep -q "dataset /input_order/retracted_rows, tier-2 slice [0-9]*: the retraction of tag 1 names no record" dmg.log ||
  fail "the refusal does not name the damaged row: $(cat dmg.log)"
rc=0
mpi 2 verify --state st-flipped >vfy.log 2>&1 || rc=$?
((rc != 0)) || fail "verify passed flipped retracted rows: $(cat vfy.log)"
grep -q "input-order retracted rows of tier-2 slice [0-9]*: XXH3 checksum mismatch over /input_order/retracted_rows" vfy.log ||
  fail "verify does not name the flipped rows: $(cat vfy.log)"
log "a damaged retracted row: the resume exits $rc naming it; flipped rows: verify names them"

# The manifest's count off by one in the latest generation, its checksum
# recomputed: the rows are whole, only the count disagrees.
/usr/bin/python3 - "$(latest st-miscounted)" "$count" <<'PYEOF' || fail "cannot miscount the manifest"
import re, sys
import h5py, numpy, xxhash
path, count = sys.argv[1], int(sys.argv[2])
# Same digit count, so the fixed-length string keeps its size.
wrong = count + 1 if len(str(count + 1)) == len(str(count)) else count - 1
with h5py.File(path, "r+") as h:
    d = h["manifest_json"]
    text = d[()].decode() if d.shape == () else d[0].decode()
    patched, n = re.subn(r'"retracted_rows":%d\b' % count, '"retracted_rows":%d' % wrong, text)
    if n != 1 or len(patched) != len(text):
        sys.exit(1)
    if d.shape == ():
        d[()] = patched.encode()
    else:
        d[0] = patched.encode()
    d.attrs.modify("checksum", numpy.uint64(xxhash.xxh3_64_intdigest(patched.encode())))
print(wrong)
PYEOF
wrong=$(h5dump -d /manifest_json "$(latest st-miscounted)" | grep -o '"retracted_rows":[0-9]*' | cut -d: -f2)
((wrong != count)) || fail "the manifest's count was not changed"
rc=0
mpi 1 verify --state st-miscounted >miscount-verify.log 2>&1 || rc=$?
((rc != 0)) || fail "verify passed a miscounted manifest: $(cat miscount-verify.log)"
grep -q "dataset /input_order/retracted_rows holds $count rows, the manifest's input_order $wrong" miscount-verify.log ||
  fail "verify does not name the miscount: $(cat miscount-verify.log)"
rc=0
mpi 3 "${ARGS[@]}" --output "$TMP/out" --state "$TMP/st-miscounted" >miscount.log 2>&1 || rc=$?
((rc != 0)) || fail "a miscounted manifest was resumed: $(cat miscount.log)"
grep -q "dataset /input_order/retracted_rows holds $count rows, the manifest's input_order $wrong" miscount.log ||
  fail "the resume does not name the miscount: $(cat miscount.log)"
log "a manifest counting $wrong retracted rows for $count: verify and the resume on 3 ranks refuse it"
log PASS
