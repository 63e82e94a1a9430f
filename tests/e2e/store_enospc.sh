#!/usr/bin/env bash
# Disk full during a checkpoint, for real (the store side): the state
# dir lives on a small loop-mounted ext4 that fills while a dedup job (2
# ranks, a checkpoint every round) writes generations. The job must end by
# itself (no hang; bound 90 s) with a non-zero exit and a message naming a
# rank, its host and "No space left on device"; the last committed
# generation must still verify; after the file system is grown (the cause
# fixed), the same command must resume and finish exactly once.
#
# usage: store_enospc.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
# Needs root (mount); exits 77 (skipped) where loop mounts are not allowed.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse store_enospc.sh "BIN ORACLE" "$@"
harness_tmp enospc enospc
MNT=$TMP/mnt IMG=$TMP/fs.img
mounted=0
harness_on_exit '((mounted == 0)) || umount "$MNT" 2>/dev/null'
mkdir -p "$MNT"
truncate -s 12M "$IMG"
mkfs.ext4 -q -F "$IMG" >/dev/null 2>&1 || { echo "mkfs.ext4 failed: skipped"; exit 77; }
mount -o loop "$IMG" "$MNT" 2>/dev/null || { echo "cannot loop-mount here: skipped"; exit 77; }
mounted=1

IN=$TMP/in OUT=$TMP/out STATE=$MNT/state
"$BIN" synth --out "$IN" --manifest "$TMP/synth.json" --records 400000 --dup-rate 0.3 --files 3 \
  --seed 31 >/dev/null
UNIQUE=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["unique_keys"])' "$TMP/synth.json")
CMD=("$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" dedup --input "$IN" --output "$OUT"
  --key-field id --capacity 400000 --state "$STATE" --checkpoint-rounds 1 --batch-bytes 262144)

start=$SECONDS
rc=0
timeout -s KILL 90 "${CMD[@]}" >"$TMP/full.log" 2>&1 || rc=$?
took=$((SECONDS - start))
log "job on a filling 12 MiB ext4: exit $rc after $took s"
((rc != 0)) || { cat "$TMP/full.log" >&2; fail "the job succeeded although the disk filled"; }
((rc != 137)) || { tail -20 "$TMP/full.log" >&2; fail "the job hung (killed by the 90 s bound)"; }
grep -q "No space left on device" "$TMP/full.log" || { cat "$TMP/full.log" >&2; fail "no ENOSPC message"; }
grep -Eq "rank [0-9]+ on [^ :]+: " "$TMP/full.log" ||
  { cat "$TMP/full.log" >&2; fail "the message does not name rank and host"; }
log "message: $(grep -m1 -o 'rank [0-9]* on [^;]*No space left on device' "$TMP/full.log" | cut -c1-160)"
[[ -f $STATE/LATEST ]] || fail "no generation was committed before the disk filled (image too small?)"
g=$(cat "$STATE/LATEST")
"$MPIEXEC" "$NP_FLAG" 2 --oversubscribe "$BIN" verify --state "$STATE" >"$TMP/verify.log" 2>&1 ||
  { cat "$TMP/verify.log" >&2; fail "the last committed generation $g does not verify"; }
log "last committed generation $g verifies"

# Fix the cause: grow the file system, then the same command resumes.
umount "$MNT"
mounted=0
# The loop device of that mount may be detached only after umount returns
# (autoclear). While it lives, `mount -o loop` of the same image reuses it,
# and its cached blocks still hold the 12 MiB file system: the "grown"
# disk was full at once in one CI run (2026-12-06). Wait until no loop
# device refers to the image, and check the size after mounting.
# Under load the autoclear can take longer than the 10 s waited here (a
# CI run on 2026-12-07, the machine busy): then detach it by hand (a busy
# device detaches at its last close) and wait once more.
loop_gone() {
  for _ in $(seq 100); do
    [[ -z $(losetup -j "$IMG" 2>/dev/null) ]] && return 0
    sleep 0.1
  done
  return 1
}
if ! loop_gone; then
  log "the loop device outlived the umount by 10 s: detached by hand"
  for dev in $(losetup -j "$IMG" -O NAME -n 2>/dev/null); do losetup -d "$dev" 2>/dev/null || true; done
  loop_gone || fail "the image's loop device stays attached: $(losetup -j "$IMG")"
fi
truncate -s 256M "$IMG"
e2fsck -f -y "$IMG" >/dev/null 2>&1 || true
resize2fs "$IMG" >/dev/null 2>&1 || fail "resize2fs failed"
mount -o loop "$IMG" "$MNT"
mounted=1
avail=$(df --output=avail -k "$MNT" | tail -1 | tr -d ' ')
((avail > 200000)) || fail "the file system did not grow: ${avail} KiB free after resize2fs to 256 MiB"
rc=0
timeout -s KILL 180 "${CMD[@]}" >"$TMP/resume.log" 2>&1 || rc=$?
((rc == 0)) || { cat "$TMP/resume.log" >&2; fail "resume after growing the disk exited $rc"; }
grep -q "resum" "$TMP/resume.log" || { cat "$TMP/resume.log" >&2; fail "did not resume"; }
"$PY" "$ORACLE" --input "$IN" --output "$OUT" --key-field id --expect-unique "$UNIQUE" >/dev/null ||
  fail "oracle rejected the outputs after the resume"
log "resumed after the disk grew: exactly once"
log PASS
