#!/usr/bin/env bash
# The run's lock record cannot be written, for real: the state dir on a
# small tmpfs filled to its last page, so opening LOCK succeeds (an inode
# is free) and writing its record fails with ENOSPC. Both fencing modes
# (fcntl, lease) must refuse the start before any work: exit 1, a message
# naming the lock file and "No space left on device", no output file and
# no RUN.json. After the space is freed the same command runs (the empty
# LOCK the refused start left is no record: nobody holds it) and keeps the
# first copy of each key. Root only (mount); exits 77 (skipped) elsewhere.
#
# usage: lease_disk_full.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse lease_disk_full.sh "BIN" "$@"
harness_tmp lease-disk-full "lease disk full"
cd "$TMP" || exit 1

FULL=$TMP/full
mkdir -p "$FULL"
mount -t tmpfs -o size=4m tmpfs "$FULL" 2>/dev/null || { log "cannot mount a tmpfs (not root?): skipped"; exit 77; }
harness_on_exit "umount '$FULL'"

mkdir in
printf '{"id":"a"}\n{"id":"b"}\n{"id":"a"}\n{"id":"c"}\n' >in/j.jsonl

for mode in fcntl lease; do
  STATE=$FULL/s-$mode OUT=$TMP/out-$mode
  mkdir "$STATE"
  dd if=/dev/zero of="$FULL/_filler" bs=4k status=none 2>/dev/null || true
  [[ $(df --output=avail "$FULL" | tail -1 | tr -d ' ') == 0 ]] || fail "$FULL is not full"
  JOB=(dedup --input in --output "$OUT" --state "$STATE" --key-field id --fencing "$mode")
  rc=0
  timeout 60 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" "${JOB[@]}" >"full-$mode.log" 2>&1 || rc=$?
  ((rc == 1)) || { cat "full-$mode.log" >&2; fail "$mode: a start with no space for the lock record exited $rc, want 1"; }
  grep -q "cannot write the lock file '$STATE/LOCK': No space left on device" "full-$mode.log" ||
    { cat "full-$mode.log" >&2; fail "$mode: no message naming the lock file and the full disk"; }
  [[ ! -e $STATE/RUN.json ]] || fail "$mode: the refused start wrote RUN.json"
  [[ -z $(find "$OUT" -type f 2>/dev/null) ]] || fail "$mode: the refused start wrote into $OUT: $(find "$OUT" -type f)"

  rm -f "$FULL/_filler"
  timeout 60 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" "${JOB[@]}" >"freed-$mode.log" 2>&1 ||
    { cat "freed-$mode.log" >&2; fail "$mode: the same command after freeing the space failed"; }
  [[ $(cat "$OUT/j.jsonl") == $'{"id":"a"}\n{"id":"b"}\n{"id":"c"}' ]] ||
    fail "$mode: after freeing the space $OUT/j.jsonl holds: $(cat "$OUT/j.jsonl")"
  log "$mode: refused on the full tmpfs (exit 1, lock file named), ran once the space was freed"
done
log "ok"
