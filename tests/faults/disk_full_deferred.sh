#!/usr/bin/env bash
# The disk that compressed outputs left to the end pass need, for real:
# under --kept-copy first on 2 ranks (--defer-compression auto, the
# default) the rounds write .gz/.zst outputs stored, at their plain size,
# for the end pass to compress once (docs/inputs.md "Where retracted lines leave the output").
# The output dir lives on a small loop-mounted ext4 that holds the
# compressed outputs but not the stored ones. The job must end within the
# bound (no hang, no rank killed by a signal), non-zero, with a message
# naming a rank, its host, an output file and "No space left on device":
# never exit 0 with short outputs. The same command with --overwrite
# --defer-compression off (the documented way out) then writes every
# output exactly once on the same disk (the oracle, gzip -t), compressed
# in the rounds (no stored member: stored_members.py; nothing deferred in
# the metrics). The corpus is .gz (deflate is where deferring saves most). Root only (loop devices); exits 77 (skipped) elsewhere.
#
# usage: disk_full_deferred.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start disk_full_deferred "$@"
IN=$TMP/in
"$BIN" synth --out "$IN" --records 400000 --dup-rate 0.3 --files 4 --compress gz --seed 19 \
  >/dev/null
UNIQUE=$("$PY" "$ORACLE" --input "$IN" --key-field id --stats |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["unique_keys"])')
GZ_MIB=$(($(du -sm "$IN" | cut -f1)))
PLAIN_MIB=$(($(zcat "$IN"/*.gz | wc -c) / 1048576))
# Room for the gzip inputs and 3 MiB (the compressed outputs, 70% of them,
# and the end pass's temporary file), below what 70% of the text takes stored.
ROOM_MIB=$((GZ_MIB + 3))
((ROOM_MIB * 10 < PLAIN_MIB * 6)) ||
  fail "the corpus does not tell the two apart (gzip $GZ_MIB MiB, plain $PLAIN_MIB MiB)"
FULL=$TMP/smallfs # a mount point holds lost+found: the outputs live below it
mount_small_fs "$FULL" 96
OUT=$FULL/out
leave_room "$FULL" "$ROOM_MIB"
log "gzip inputs ${GZ_MIB} MiB (${PLAIN_MIB} MiB of text);" \
  "$(df -h --output=avail "$FULL" | tail -1 | tr -d ' ') left for the outputs"
ARGS=(--input "$IN" --output "$OUT" --key-field id --capacity 400000 --batch-bytes 262144
  --progress 0 --metrics "$TMP/m.json")

expect_disk_full d1 2 disk-full-deferred "stored outputs larger than the disk" "${ARGS[@]}"

run_job d2 2 120 "${ARGS[@]}" --overwrite --defer-compression off
((RC == 0)) || fail "--defer-compression off on the same disk exited $RC"
check_outputs "$OUT"
"$PY" "$(dirname "$0")/../e2e/stored_members.py" "$OUT" >"$TMP/members.txt" 2>&1 ||
  fail "$(cat "$TMP/members.txt")"
grep -q '"end_pass_compressed_outputs": *0' "$TMP/m.json" ||
  fail "--defer-compression off deferred outputs all the same"
grep -Eq '"retracted": *[1-9]' "$TMP/m.json" || fail "no copy retracted: the end pass cut nothing"
log "--overwrite --defer-compression off on the same disk: every output exactly once, compressed"
log "ok"
