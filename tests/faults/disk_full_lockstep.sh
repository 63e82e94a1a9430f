#!/usr/bin/env bash
# A full disk under the lockstep layout, for real: a run without --state on
# plain inputs (docs/inputs.md "The lockstep layout") writes each block's
# kept lines with pwritev on a thread of its own, several ranks into one
# output. Its output dir lives on a small loop-mounted ext4 with less room
# than the outputs need. The job must end within the bound (no hang, no
# rank killed by a signal), non-zero, with a message naming a rank, its
# host, an output file and "No space left on device". After the space is
# freed the same command with --overwrite writes every output exactly once
# (the oracle), in the lockstep layout. Root only (loop devices); exits 77
# (skipped) elsewhere.
#
# usage: disk_full_lockstep.sh BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "$0")/lib.sh"
fault_start disk_full_lockstep "$@"
IN=$TMP/in
"$BIN" synth --out "$IN" --records 300000 --dup-rate 0.3 --files 4 --compress none --seed 17 \
  >/dev/null
UNIQUE=$("$PY" "$ORACLE" --input "$IN" --key-field id --stats |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["unique_keys"])')
IN_MIB=$(($(du -sm "$IN" | cut -f1)))
FULL=$TMP/smallfs # a mount point holds lost+found: the outputs live below it
mount_small_fs "$FULL" 96
OUT=$FULL/out
# Leave room for about a third of the outputs (70% of the input's bytes).
ROOM_MIB=$((IN_MIB / 4))
leave_room "$FULL" "$ROOM_MIB"
log "input ${IN_MIB} MiB; $(df -h --output=avail "$FULL" | tail -1 | tr -d ' ') left for the outputs"
ARGS=(--input "$IN" --output "$OUT" --key-field id --capacity 300000 --batch-bytes 262144
  --progress 0 --metrics "$TMP/m.json")

expect_disk_full d1 2 disk-full-lockstep-output "outputs larger than the disk" "${ARGS[@]}"

rm -f "$FULL/_filler"
run_job d2 3 120 "${ARGS[@]}" --overwrite
((RC == 0)) || fail "the job exited $RC after the space was freed"
grep -q '"input_layout": *"lockstep"' "$TMP/m.json" || fail "the rerun did not read in lockstep"
check_outputs "$OUT"
log "after freeing the space: --overwrite on 3 ranks, every output exactly once"
log "ok"
